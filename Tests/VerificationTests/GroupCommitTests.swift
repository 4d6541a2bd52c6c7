import Delivery
import DeliveryTestSupport
import Foundation
import Runtime
import Storage
import TestSupport
@testable import Verification
import XCTest


/// On SQLite, writes that arrive while a transaction is committing share the next one (one
/// fsync for the group), each still answered only once committed, each rolled back alone.
final class GroupCommitTests: XCTestCase {
    func testStartsQueuedBehindACommitShareOneTransactionAndAllCount() throws {
        let directory = NSTemporaryDirectory() + "verification-group-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try Database(path: directory + "/v.sqlite", migrations: VerificationSchema.sqlite)
        let store = SQLVerificationStore(database: database)
        // No delivery worker: the only writes are the held one and the starts.
        let service = VerificationService(
            settings: VerificationSettings(replicaID: "test-1"), store: store, providers: ChannelProviders(all: RecordingProvider()),
            key: Array(repeating: 7, count: 32), clock: ManualClock())
        let logger = Logger(service: "verification", sink: LogSink())
        let gate = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        // Threads of their own: blocked Dispatch workers would make Dispatch add threads slowly.
        func spawn(_ body: @escaping @Sendable () -> Void) {
            group.enter()
            Thread.detachNewThread {
                body()
                group.leave()
            }
        }
        // The leader's transaction stays open until every start has queued behind it.
        let holding = DispatchSemaphore(value: 0)
        spawn {
            _ = try? store.write { _ in
                holding.signal()
                gate.wait()
            }
        }
        // Only once the leader is inside its transaction do the starts begin: otherwise a start that
        // ran first would lead, commit alone, and leave nothing to queue.
        XCTAssertEqual(holding.wait(timeout: .now() + 20), .success)
        let outcomes = SharedList<String>()
        for index in 0..<16 {
            spawn {
                var parameters = StartParameters(workflow: .sms, purpose: .transaction)
                parameters.number = String(format: "+1555555%04d", 2000 + index)
                do {
                    _ = try service.start(parameters, logger: logger)
                    outcomes.append("started")
                } catch {
                    outcomes.append("\(error)")
                }
            }
        }
        let deadline = Date().addingTimeInterval(20)
        while (store.groupCommitQueued < 16 || store.groupCommitStatistics.batches > 0) && Date() < deadline { usleep(1000) }
        // Normally all sixteen are queued by now; a sanitizer can slow threads past the deadline.
        let queuedAtRelease = store.groupCommitQueued
        XCTAssertGreaterThanOrEqual(queuedAtRelease, 2, "starts queued behind the open transaction")
        gate.signal()
        XCTAssertEqual(group.wait(timeout: .now() + 20), .success)
        XCTAssertEqual(outcomes.all, Array(repeating: "started", count: 16))
        let (batches, jobs) = store.groupCommitStatistics
        XCTAssertEqual(jobs, 17)
        // The queued starts shared one transaction: the leader's, theirs, and one each for any
        // that arrived after the release.
        XCTAssertLessThanOrEqual(batches, 2 + (16 - queuedAtRelease), "the queued starts committed together")
        let stored = try database.read { c in try c.queryOne("SELECT COUNT(*) AS n FROM requests")?.int("n") }
        XCTAssertEqual(stored, 16)
    }
}
