import Delivery
import DeliveryTestSupport
import Foundation
import Runtime
import Storage
import StoreTestSupport
import TestSupport
import XCTest

@testable import Verification

/// Every statement of the verification hot paths reads through an index (SQLite's plan says
/// SEARCH, never SCAN, and sorts nothing), and the send limits are point lookups: their cost
/// does not grow with how many messages went out before.
final class QueryPlanTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "verification-plans-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testStartCheckNextCancelAndTimerReadByIndex() throws {
        let recorder = QueryPlanRecorder(try Database(path: directory + "/v.sqlite", migrations: VerificationSchema.sqlite))
        let harness = Harness(database: recorder) {
            $0.perUser = [SendLimit(count: 100, windowSeconds: 600), SendLimit(count: 1000, windowSeconds: 86_400)]
            $0.perClient = $0.perUser
        }
        let owner: (inout StartParameters) -> Void = { $0.userID = "u_1"; $0.provenNumber = $0.number; $0.client = "10.0.0.1" }
        // Some history first, so every limit key has sends before the measured ones.
        for index in 0..<3 {
            let id = try harness.start(number: "+1555555020\(index)", owner)
            _ = try harness.check(id, harness.code(id))
        }
        _ = recorder.take()
        let id = try harness.start(number: "+15555550209", workflow: .smsVoiceVoice) { owner(&$0); $0.nextEventWaitSeconds = 60 }
        _ = try harness.service.next(requestID: id, owner: nil, client: "10.0.0.1", logger: harness.logger)
        harness.clock.advance(seconds: 60)
        harness.service.runDueSteps(logger: harness.logger)
        _ = try harness.check(id, harness.code(id))
        let cancelled = try harness.start(number: "+15555550208", owner)
        _ = try harness.service.cancel(requestID: cancelled, owner: nil, logger: harness.logger)
        let plans = recorder.take()

        XCTAssertGreaterThan(plans.count, 20, "the paths ran")
        for plan in plans {
            XCTAssertEqual(plan.scans, [], "\(plan)")
            XCTAssertEqual(plan.sorts, [], "\(plan)")
        }
        let windowReads = plans.filter { $0.touches("send_log") || $0.touches("sends") }
        XCTAssertGreaterThan(windowReads.count, 8, "the send limits were read")
        for plan in windowReads {
            // A range (`at>?`) reads every send of the window; an equality on the key reads one.
            XCTAssertFalse(plan.details.contains { $0.contains(">") || $0.contains("<") }, "a range read: \(plan)")
        }
    }

    /// Every page a start changes is written to the log, checksummed and flushed: a send is one
    /// row per limit key, its number read back from that key's own newest row, with no second
    /// table of newest numbers to keep in step (it cost a page a key, at random places). That
    /// one read per key serves the key's limits and the send's number.
    func testAStartWritesOneRowPerLimitKeyAndReadsItsNewestNumberFromTheLog() throws {
        let recorder = QueryPlanRecorder(try Database(path: directory + "/v.sqlite", migrations: VerificationSchema.sqlite))
        let harness = Harness(database: recorder)
        let owner: (inout StartParameters) -> Void = { $0.userID = "u_1"; $0.provenNumber = $0.number; $0.client = "10.0.0.1" }
        let first = try harness.start(number: "+15555550201", owner)
        _ = try harness.check(first, harness.code(first))
        _ = recorder.take()
        _ = try harness.start(number: "+15555550202", owner)
        let plans = recorder.take()

        let sendWrites = plans.filter { plan in
            let verb = plan.sql.drop { $0.isWhitespace }.prefix(6).uppercased()
            return ["INSERT", "UPDATE", "DELETE"].contains(verb) && !plan.touches("requests") && !plan.touches("request_events")
                && !plan.touches("deliveries")
        }
        // Four keys: the number, the user, the client and the global budget.
        XCTAssertEqual(sendWrites.count, 4, "\(sendWrites)")
        XCTAssertTrue(sendWrites.allSatisfy { $0.touches("send_log") }, "\(sendWrites)")
        let newest = plans.filter { $0.touches("send_log") && $0.sql.contains("ORDER BY seq DESC") }
        XCTAssertEqual(newest.count, 4, "each key's newest send read once, for its limits and its number: \(plans)")
        for plan in newest {
            XCTAssertEqual(plan.sorts, [], "\(plan)")
            XCTAssertTrue(plan.details.contains { $0.contains("PRIMARY KEY (key=?)") }, "\(plan)")
        }
    }

    /// The live-code lookup and the timers read indexes of pending requests only: a finished
    /// request leaves them, so a check changes one entry of each instead of moving it.
    func testIndexesOfTheLiveCodeAndTheTimersHoldPendingRequestsOnly() throws {
        let database = try Database(path: directory + "/v.sqlite", migrations: VerificationSchema.sqlite)
        let harness = Harness(database: database)
        let verified = try harness.start(number: "+15555550301", workflow: .smsVoiceVoice)
        _ = try harness.check(verified, harness.code(verified))
        _ = try harness.start(number: "+15555550302", workflow: .smsVoiceVoice)
        _ = try harness.start(number: "+15555550303")

        let byName = try entriesByTree(database, named: "requests%")
        XCTAssertEqual(byName["requests"], 3, "\(byName)")
        XCTAssertEqual(byName["requests_live"], 2, "the two pending requests: \(byName)")
        XCTAssertEqual(byName["requests_pending_events"], 2, "the two pending requests: \(byName)")
    }

    /// A first message handed to a delivery worker is one row in one tree, found by its id: only
    /// messages waiting in the queue are in the index the queue is read by, and no second tree
    /// maps ids to rows. Its row is written by the start and removed after the send.
    func testAHandedOffMessageIsOneEntryInOneTreeAndAQueuedOneIsIndexedForTheQueue() throws {
        let database = try Database(path: directory + "/v.sqlite", migrations: VerificationSchema.sqlite)
        var settings = VerificationSettings(replicaID: "test-1")
        settings.delivery.handOffCapacity = 1
        let service = VerificationService(
            settings: settings, store: SQLVerificationStore(database: database), providers: ChannelProviders(all: RecordingProvider()),
            key: Array(repeating: 7, count: 32), clock: ManualClock())
        let logger = Logger(service: "verification", sink: LogSink())
        for number in ["+15555550401", "+15555550402"] {
            var parameters = StartParameters(workflow: .sms, purpose: .transaction)
            parameters.number = number
            _ = try service.start(parameters, logger: logger)
        }

        XCTAssertEqual(
            try entriesByTree(database, named: "%deliveries%"), ["deliveries": 2, "deliveries_due": 1],
            "the handed-off message and the queued one, which alone is due")
    }
}
