import Delivery
import DeliveryTestSupport
import Foundation
import LineProtocol
import Platform
import Runtime
import TestSupport
@testable import Verification
import XCTest


/// Fails the first `transientFailures` tries with a transient error, then records; or blocks
/// every send until `open()` while counting how many are under way at once.
final class ScriptedProvider: DeliveryProvider, @unchecked Sendable {
    let name = "scripted"
    private let condition = NSCondition()
    private var failuresLeft: Int
    private var gateOpen: Bool
    private var tries: [OutgoingMessage] = []
    private var delivered: [OutgoingMessage] = []
    private var inFlight = 0
    private(set) var mostInFlight = 0

    init(transientFailures: Int = 0, gateOpen: Bool = true) {
        failuresLeft = transientFailures
        self.gateOpen = gateOpen
    }

    func deliver(_ message: OutgoingMessage) throws(DeliveryError) {
        condition.lock()
        defer { condition.unlock() }
        tries.append(message)
        inFlight += 1
        mostInFlight = max(mostInFlight, inFlight)
        condition.broadcast()
        while !gateOpen { condition.wait() }
        inFlight -= 1
        if failuresLeft > 0 {
            failuresLeft -= 1
            throw DeliveryError(provider: name, detail: "HTTP 503", permanent: false)
        }
        delivered.append(message)
        condition.broadcast()
    }

    func open() {
        condition.lock()
        gateOpen = true
        condition.broadcast()
        condition.unlock()
    }

    var attempts: [OutgoingMessage] { locked { tries } }
    var sent: [OutgoingMessage] { locked { delivered } }
    var concurrencyPeak: Int { locked { mostInFlight } }

    /// Waits (bounded) until `count` sends are blocked at the gate, or `count` were delivered.
    func waitFor(inFlight count: Int) -> Bool { wait { inFlight >= count } }
    func waitFor(sent count: Int) -> Bool { wait { delivered.count >= count } }

    private func wait(_ predicate: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        condition.lock()
        defer { condition.unlock() }
        while !predicate() { if !condition.wait(until: deadline) { return predicate() } }
        return true
    }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }
}

class DeliveryQueueTests: VerificationTestCase {
    private let logger = Logger(service: "verification", sink: LogSink())

    private func eventKinds(_ service: VerificationService, _ id: String) throws -> [String] {
        try service.status(requestID: id, owner: nil)["events"]?.arrayValue?.compactMap { $0["kind"]?.stringValue } ?? []
    }

    private func check(_ service: VerificationService, _ id: String, _ message: OutgoingMessage?) throws -> CheckResult {
        let code = try XCTUnwrap(message.flatMap { extractCode($0.text) })
        return try service.check(requestID: id, code: code, payload: nil, owner: nil, logger: logger)
    }

    func testStartQueuesTheMessageInItsTransactionAndAnswersBeforeTheSend() throws {
        let provider = ScriptedProvider()
        let service = try deliveryService(provider, clock: ManualClock())
        let id = try startSMS(service)
        XCTAssertTrue(provider.attempts.isEmpty, "nothing sent inside the request")
        XCTAssertEqual(try service.queuedDeliveryCount(), 1)
        XCTAssertEqual(try eventKinds(service, id), ["started"])

        XCTAssertNotEqual(service.sendNextQueuedDelivery(logger: logger), .nothingDue)
        XCTAssertEqual(service.sendNextQueuedDelivery(logger: logger), .nothingDue, "sent once, then nothing is due")
        let message = try XCTUnwrap(provider.sent.first)
        XCTAssertTrue(message.deliveryID?.hasPrefix("dl_") ?? false)
        XCTAssertEqual(message.requestID, id)
        XCTAssertEqual(try service.queuedDeliveryCount(), 0, "a sent message leaves the queue")
        XCTAssertEqual(try eventKinds(service, id), ["started", "sent"])
        XCTAssertEqual(try check(service, id, message).channel, .sms)
    }

    func testTransientFailureIsRetriedAfterTheBackOffWithTheSameKeyAndCode() throws {
        let provider = ScriptedProvider(transientFailures: 1)
        let clock = ManualClock()
        let service = try deliveryService(provider, clock: clock)
        let id = try startSMS(service)
        XCTAssertNotEqual(service.sendNextQueuedDelivery(logger: logger), .nothingDue)
        XCTAssertEqual(service.sendNextQueuedDelivery(logger: logger), .nothingDue, "not due before the back-off")
        XCTAssertEqual(try eventKinds(service, id), ["started", "delivery_retry"])
        clock.advance(seconds: 1)
        XCTAssertNotEqual(service.sendNextQueuedDelivery(logger: logger), .nothingDue)
        let tries = provider.attempts
        XCTAssertEqual(tries.count, 2)
        XCTAssertEqual(tries[0].deliveryID, tries[1].deliveryID, "one idempotency key for every try")
        XCTAssertEqual(tries[0].text, tries[1].text, "the same code on every try")
        XCTAssertEqual(try eventKinds(service, id), ["started", "delivery_retry", "sent"])
        XCTAssertEqual(try service.status(requestID: id, owner: nil)["status"], "pending")
        _ = try check(service, id, provider.sent.first)
    }

    func testTriesEndAtTheLimitAndAFailedFirstMessageFailsTheRequest() throws {
        let provider = ScriptedProvider(transientFailures: 100)
        let clock = ManualClock()
        let service = try deliveryService(provider, clock: clock)
        let id = try startSMS(service)
        for _ in 0..<10 {
            service.sendNextQueuedDelivery(logger: logger)
            clock.advance(seconds: 60)
        }
        XCTAssertEqual(provider.attempts.count, 3, "--delivery-attempts tries, no more")
        XCTAssertEqual(try eventKinds(service, id), ["started", "delivery_retry", "delivery_retry", "delivery_failed"])
        XCTAssertEqual(try service.status(requestID: id, owner: nil)["status"], "failed")
        XCTAssertEqual(try service.queuedDeliveryCount(), 0)
    }

    /// kill -9 mid-send, in process: a claimed message whose process died is resent by the
    /// next service over the same file, under the same key and with the same code.
    func testAMessageInterruptedMidSendIsResentAfterARestartWithTheSameKeyAndCode() throws {
        let clock = ManualClock()
        let first = try deliveryService(ScriptedProvider(), clock: clock)
        let id = try startSMS(first)
        let claimed = try XCTUnwrap(try first.store.write { tx in try tx.claimDueDelivery(nowMilliseconds: clock.nowMilliseconds(), claimant: "test-1")?.delivery })
        XCTAssertEqual(first.sendNextQueuedDelivery(logger: logger), .nothingDue, "a message being sent is not taken twice")

        let provider = ScriptedProvider()
        let restarted = try deliveryService(provider, clock: clock)
        try restarted.requeueInterruptedDeliveries(logger: logger)
        XCTAssertNotEqual(restarted.sendNextQueuedDelivery(logger: logger), .nothingDue)
        XCTAssertEqual(restarted.sendNextQueuedDelivery(logger: logger), .nothingDue)
        let message = try XCTUnwrap(provider.sent.first)
        XCTAssertEqual(provider.sent.count, 1)
        XCTAssertEqual(message.deliveryID, claimed.id)
        XCTAssertEqual(extractCode(message.text), first.deliveryCode(claimed, length: 6))
        XCTAssertEqual(try eventKinds(restarted, id), ["started", "sent"])
        _ = try check(restarted, id, message)
    }

    func testAMessageForACancelledRequestIsNotSent() throws {
        let provider = ScriptedProvider()
        let service = try deliveryService(provider, clock: ManualClock())
        let id = try startSMS(service)
        _ = try service.cancel(requestID: id, owner: nil, logger: logger)
        XCTAssertNotEqual(service.sendNextQueuedDelivery(logger: logger), .nothingDue)
        XCTAssertTrue(provider.attempts.isEmpty)
        XCTAssertEqual(try eventKinds(service, id), ["started", "cancelled", "delivery_dropped"])
    }

    func testAMessageOlderThanItsCodeIsNotSent() throws {
        let provider = ScriptedProvider()
        let clock = ManualClock()
        let service = try deliveryService(provider, clock: clock)
        let id = try startSMS(service)
        clock.advance(seconds: 300)
        XCTAssertNotEqual(service.sendNextQueuedDelivery(logger: logger), .nothingDue)
        XCTAssertTrue(provider.attempts.isEmpty)
        let events = try service.status(requestID: id, owner: nil)["events"]?.arrayValue ?? []
        XCTAssertEqual(events.first { $0["kind"] == "delivery_dropped" }?["detail"], "expired")
    }

    /// The claim is one transaction: eight threads draining one queue send each message once.
    func testABurstOfWorkersSendsEveryMessageExactlyOnce() throws {
        let provider = ScriptedProvider()
        let service = try deliveryService(provider, clock: ManualClock())
        var ids: [String] = []
        for index in 0..<60 { ids.append(try startSMS(service, number: String(format: "+1555555%04d", 1000 + index))) }
        let logger = self.logger
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            while service.sendNextQueuedDelivery(logger: logger) != .nothingDue {}
        }
        let sent = provider.sent
        XCTAssertEqual(sent.count, 60)
        XCTAssertEqual(Set(sent.compactMap(\.deliveryID)).count, 60)
        XCTAssertEqual(Set(sent.compactMap(\.requestID)), Set(ids))
    }

    /// A later step's code takes over only once it is out: until then the previous code works.
    func testANextStepCodeReplacesTheCurrentOneOnlyOnceSent() throws {
        let provider = ScriptedProvider()
        let service = try deliveryService(provider, clock: ManualClock())
        var parameters = StartParameters(workflow: .smsVoice, purpose: .transaction)
        parameters.number = "+15555550100"
        parameters.nextEventWaitSeconds = 60
        let id = try service.start(parameters, logger: logger)
        service.sendNextQueuedDelivery(logger: logger)
        let smsCode = try XCTUnwrap(provider.sent.first.flatMap { extractCode($0.text) })
        XCTAssertEqual(try service.next(requestID: id, owner: nil, client: nil, logger: logger), .voice)
        XCTAssertEqual(try service.check(requestID: id, code: smsCode, payload: nil, owner: nil, logger: logger).channel, .sms)
    }

    func testDeliveryWorkersAreBoundedAndRequestsNeverWaitForTheProvider() throws {
        let provider = ScriptedProvider(gateOpen: false)
        let service = try deliveryService(provider, clock: ManualClock())
        let logger = self.logger
        let dispatcher = DeliveryWorkers(workerCount: 2, name: "delivery-test", logger: logger) { service.sendNextQueuedDelivery(logger: logger) }
        service.deliveryWakeup.onQueued { [weak dispatcher] in dispatcher?.wake() }
        var ids: [String] = []
        for index in 0..<6 { ids.append(try startSMS(service, number: String(format: "+1555555%04d", 2000 + index))) }
        XCTAssertTrue(provider.waitFor(inFlight: 2), "two sends held by the provider")
        // Every start returned while the provider held its sends; requests keep working.
        XCTAssertEqual(try service.status(requestID: ids[5], owner: nil)["status"], "pending")
        provider.open()
        XCTAssertTrue(provider.waitFor(sent: 6))
        XCTAssertEqual(provider.concurrencyPeak, 2, "at most --delivery-workers sends at once")
        XCTAssertTrue(dispatcher.stop(deadlineMilliseconds: MonotonicClock.nowMilliseconds() + 5000))
        XCTAssertEqual(Set(provider.sent.compactMap(\.requestID)), Set(ids))
    }

    /// A pass says whether another message was already due when it took its own, so a worker
    /// calls for help only then.
    func testAPassSaysWhetherAnotherMessageWasDue() throws {
        let service = try deliveryService(ScriptedProvider(), clock: ManualClock())
        _ = try startSMS(service, number: "+15555553000")
        _ = try startSMS(service, number: "+15555553001")
        XCTAssertEqual(service.sendNextQueuedDelivery(logger: logger), .handled(moreDue: true))
        XCTAssertEqual(service.sendNextQueuedDelivery(logger: logger), .handled(moreDue: false))
        XCTAssertEqual(service.sendNextQueuedDelivery(logger: logger), .nothingDue)
    }

    /// A message queued while a pass sends another wakes the workers itself: the pass says more
    /// is due only for what its own claim saw, and the message is still sent by the next pass.
    func testAMessageQueuedDuringASendIsNotMoreDueForThatPass() throws {
        let provider = ScriptedProvider(gateOpen: false)
        let service = try deliveryService(provider, clock: ManualClock())
        let logger = self.logger
        let wakeups = SharedList<Int>()
        service.deliveryWakeup.onQueued { wakeups.append(1) }
        _ = try startSMS(service, number: "+15555556000")
        let firstPass = SharedList<DeliveryPass>()
        let sending = JoinableThread(name: "first-pass") { firstPass.append(service.sendNextQueuedDelivery(logger: logger)) }
        XCTAssertTrue(provider.waitFor(inFlight: 1), "the first message is being sent")
        _ = try startSMS(service, number: "+15555556001")
        provider.open()
        sending.join()
        XCTAssertEqual(firstPass.all, [.handled(moreDue: false)])
        XCTAssertEqual(wakeups.all.count, 2, "each start woke the workers")
        XCTAssertEqual(service.sendNextQueuedDelivery(logger: logger), .handled(moreDue: false))
        XCTAssertEqual(service.sendNextQueuedDelivery(logger: logger), .nothingDue)
        XCTAssertEqual(provider.sent.count, 2)
    }

    /// One message at a time costs one claim: a worker that sent the only message due neither
    /// looks again nor wakes another worker to find the queue empty (each such look is a write
    /// transaction and two context switches).
    func testMessagesQueuedOneAtATimeAreEachClaimedOnceWithoutEmptyLooks() throws {
        let provider = ScriptedProvider()
        let service = try deliveryService(provider, clock: ManualClock())
        let logger = self.logger
        let emptyLooks = SharedList<Int>()
        let workers = DeliveryWorkers(workerCount: 4, name: "delivery-test", logger: logger) {
            let pass = service.sendNextQueuedDelivery(logger: logger)
            if pass == .nothingDue { emptyLooks.append(1) }
            return pass
        }
        service.deliveryWakeup.onQueued { [weak workers] in workers?.wake() }
        for index in 0..<20 {
            _ = try startSMS(service, number: String(format: "+1555555%04d", 4000 + index))
            XCTAssertTrue(provider.waitFor(sent: index + 1))
        }
        XCTAssertTrue(workers.stop(deadlineMilliseconds: MonotonicClock.nowMilliseconds() + 5000))
        XCTAssertEqual(provider.sent.count, 20)
        // The stop takes one last look at the queue.
        XCTAssertLessThanOrEqual(emptyLooks.all.count, 1, "empty looks: \(emptyLooks.all.count) for 20 messages")
    }

    /// Starts from many threads at once while the workers drain: a worker that saw no other
    /// message due still finds the ones queued after its claim, so none waits for a later wake.
    func testABurstOfStartsWhileWorkersDrainSendsEveryMessageOnce() throws {
        let provider = ScriptedProvider()
        assertABurstOfStartsSendsEveryMessageOnce(try deliveryService(provider, clock: ManualClock()), provider, numberBlock: "556")
    }

    func testTheCodeIsAKeyedFunctionOfItsSeed() throws {
        let service = try deliveryService(ScriptedProvider(), clock: ManualClock())
        let delivery = QueuedDelivery.make(requestID: "vr_a", step: 0, channel: .sms, trigger: "start", nowMilliseconds: 0)
        var other = delivery
        other.codeSeed = Array(repeating: 1, count: 16)
        for length in 4...10 {
            let code = service.deliveryCode(delivery, length: length)
            XCTAssertEqual(code.count, length)
            XCTAssertTrue(code.allSatisfy(\.isNumber))
            XCTAssertEqual(code, service.deliveryCode(delivery, length: length))
        }
        XCTAssertNotEqual(service.deliveryCode(delivery, length: 10), service.deliveryCode(other, length: 10))
    }
}
