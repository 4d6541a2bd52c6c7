import Delivery
import DeliveryTestSupport
import Foundation
import LineProtocol
import Platform
import Runtime
import TestSupport
@testable import Verification
import XCTest

/// A start hands its first message straight to a delivery worker, claimed in the start's own
/// transaction (`DeliveryHandOff`): no claiming transaction per message, the same at-least-once
/// guarantee through a kill, and no message left behind when the hand-off is full.
final class DeliveryHandOffTests: VerificationTestCase {
    private let logger = Logger(service: "verification", sink: LogSink())

    private func writes(_ service: VerificationService) -> Int {
        (service.store as! SQLVerificationStore).groupCommitStatistics.jobs
    }

    /// Two write transactions a message (the start, the outcome) where the queue takes three.
    func testAHandedOffMessageIsSentWithoutAClaimingTransaction() throws {
        for (capacity, expectedWrites) in [(0, 3), (4, 2)] {
            let provider = ScriptedProvider()
            let service = try deliveryService(provider, handOff: capacity)
            let before = writes(service)
            let id = try startSMS(service, number: "+1555555010\(capacity)")
            XCTAssertEqual(service.sendNextQueuedDelivery(logger: logger), .handled(moreDue: false))
            XCTAssertEqual(writes(service) - before, expectedWrites, "hand-off capacity \(capacity)")
            XCTAssertEqual(service.sendNextQueuedDelivery(logger: logger), .nothingDue)
            XCTAssertEqual(provider.sent.map(\.requestID), [id])
            XCTAssertEqual(try service.queuedDeliveryCount(), 0)
            let code = try XCTUnwrap(provider.sent.first.flatMap { extractCode($0.text) })
            XCTAssertEqual(try service.check(requestID: id, code: code, payload: nil, owner: nil, logger: logger).channel, .sms)
        }
    }

    /// kill -9 after the start committed, before a worker sent the handed-off message: it is
    /// `sending` under this replica in the file, so the next start sends it, once, with its code.
    func testAHandedOffMessageAProcessDiedWithIsSentAfterTheRestart() throws {
        let clock = ManualClock()
        let killed = try deliveryService(ScriptedProvider(), clock: clock, handOff: 4)
        let id = try startSMS(killed, number: "+15555550111")
        let provider = ScriptedProvider()
        let restarted = try deliveryService(provider, clock: clock, handOff: 4)
        XCTAssertEqual(restarted.sendNextQueuedDelivery(logger: logger), .nothingDue, "claimed by the start: not due before the restart's requeue")
        try restarted.requeueInterruptedDeliveries(logger: logger)
        XCTAssertNotEqual(restarted.sendNextQueuedDelivery(logger: logger), .nothingDue)
        XCTAssertEqual(restarted.sendNextQueuedDelivery(logger: logger), .nothingDue)
        XCTAssertEqual(provider.sent.map(\.requestID), [id])
        let code = try XCTUnwrap(provider.sent.first.flatMap { extractCode($0.text) })
        XCTAssertEqual(try restarted.check(requestID: id, code: code, payload: nil, owner: nil, logger: logger).channel, .sms)
    }

    /// The hand-off is full, so the second start queues its message: the pass that sends the
    /// handed-off one says more is due, and the queued one goes out on the next pass.
    func testAMessageQueuedWhileTheHandOffIsFullIsNotLeftBehind() throws {
        let provider = ScriptedProvider()
        let metrics = Metrics()
        let service = try deliveryService(provider, handOff: 1, metrics: metrics)
        let first = try startSMS(service, number: "+15555550121")
        let second = try startSMS(service, number: "+15555550122")
        XCTAssertEqual(try service.queuedDeliveryCount(), 2)
        XCTAssertEqual(metrics.counter("delivery.handed_off"), 1)
        XCTAssertEqual(metrics.counter("delivery.hand_off_full"), 1)
        XCTAssertEqual(service.sendNextQueuedDelivery(logger: logger), .handled(moreDue: true), "the queued message still wants a look")
        XCTAssertEqual(service.sendNextQueuedDelivery(logger: logger), .handled(moreDue: false))
        XCTAssertEqual(service.sendNextQueuedDelivery(logger: logger), .nothingDue)
        XCTAssertEqual(provider.sent.map(\.requestID), [first, second])
    }

    /// A refused start gives its place back: the next start still hands off.
    func testARefusedStartGivesItsPlaceBack() throws {
        let service = try deliveryService(ScriptedProvider(), handOff: 1)
        _ = try startSMS(service, number: "+15555550131")
        XCTAssertThrowsError(try startSMS(service, number: "+15555550131"), "one live code per number")
        XCTAssertEqual(service.sendNextQueuedDelivery(logger: logger), .handled(moreDue: false))
        let before = writes(service)
        _ = try startSMS(service, number: "+15555550132")
        XCTAssertEqual(service.sendNextQueuedDelivery(logger: logger), .handled(moreDue: false))
        XCTAssertEqual(writes(service) - before, 2, "handed off: no claim")
    }

    /// Eight threads start 40 codes against two hand-off places and four workers: some go straight
    /// to a worker, the rest through the queue, and every message is sent exactly once.
    func testABurstWiderThanTheHandOffSendsEveryMessageOnce() throws {
        let provider = ScriptedProvider()
        let service = try deliveryService(provider, handOff: 2)
        assertABurstOfStartsSendsEveryMessageOnce(service, provider, numberBlock: "557")
        XCTAssertEqual(try service.queuedDeliveryCount(), 0)
    }
}
