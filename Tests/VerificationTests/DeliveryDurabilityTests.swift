import Delivery
import DeliveryTestSupport
import Foundation
import LineProtocol
import Runtime
import Storage
import TestSupport
@testable import Verification
import XCTest


/// What waits for the disk in a code's life: the start (it answers a request id) and the check
/// (a code is single use) commit at `synchronous=FULL`; the delivery's claim and its outcome do
/// not (losing either to a power cut only sends the message again under its key). Read inside
/// each write, where SQLite applies the level to that transaction's commit; with the group
/// committer and without it.
final class DeliveryDurabilityTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "verification-durability-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: directory) }

    func testStartAndCheckWaitForTheDiskWhileTheDeliveryClaimAndOutcomeDoNot() throws {
        for groupCommitMax in [64, 1] {
            let database = try Database(
                path: directory + "/v\(groupCommitMax).sqlite", options: DatabaseOptions(synchronous: .full), migrations: VerificationSchema.sqlite)
            let store = LevelRecordingStore(SQLVerificationStore(database: database, groupCommitMax: groupCommitMax))
            let provider = RecordingProvider()
            let service = VerificationService(
                settings: VerificationSettings(replicaID: "test-1"), store: store, providers: ChannelProviders(all: provider),
                key: Array(repeating: 7, count: 32), clock: ManualClock())
            let logger = Logger(service: "verification", sink: LogSink())
            var parameters = StartParameters(workflow: .sms, purpose: .transaction)
            parameters.number = "+15555550100"
            let id = try service.start(parameters, logger: logger)
            XCTAssertNotEqual(service.sendNextQueuedDelivery(logger: logger), .nothingDue, "the start's message was due")
            let code = try XCTUnwrap(provider.code(for: id))
            _ = try service.check(requestID: id, code: code, payload: nil, owner: nil, logger: logger)
            XCTAssertEqual(store.levels, [2, 1, 1, 2], "start, claim, sent, check (group commit max \(groupCommitMax))")
            XCTAssertEqual(try database.write { c in try c.queryOne("PRAGMA synchronous")?.int("synchronous") }, 2, "the writer is back at FULL")
        }
    }
}

/// Passes every write through, noting the `synchronous` level its transaction runs at.
final class LevelRecordingStore: VerificationStore, @unchecked Sendable {
    private let inner: SQLVerificationStore
    private let lock = NSLock()
    private var recorded: [Int64] = []

    init(_ inner: SQLVerificationStore) { self.inner = inner }

    var levels: [Int64] {
        lock.lock()
        defer { lock.unlock() }
        return recorded
    }

    func write<T>(durable: Bool, _ body: @escaping (VerificationTransaction) throws -> T) throws -> T {
        try inner.write(durable: durable) { [self] tx in
            let connection = try XCTUnwrap(tx as? SQLTransaction).connection
            let level = try XCTUnwrap(connection.queryOne("PRAGMA synchronous")?.int("synchronous"))
            lock.lock()
            recorded.append(level)
            lock.unlock()
            return try body(tx)
        }
    }

    func read<T>(_ body: (VerificationTransaction) throws -> T) throws -> T { try inner.read(body) }
}
