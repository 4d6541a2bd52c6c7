import Foundation
import Storage
import TestSupport
import XCTest

@testable import Accounts

/// A write may skip the wait for the disk (`durable: false`) only when every write in its
/// transaction may: one durable member makes the whole batch wait (`synchronous=FULL`), and the
/// writer is back at FULL for whoever writes next. The level is read inside each job, as SQLite
/// applies it to that transaction's commit.
final class GroupCommitDurabilityTests: XCTestCase {
    private var directory = ""
    private var database: Database!

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "group-durability-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        database = try Database(path: directory + "/g.sqlite", options: DatabaseOptions(synchronous: .full), migrations: [
            Migration(version: 1, name: "t", sql: "CREATE TABLE t (n INTEGER NOT NULL)"),
        ])
    }

    override func tearDown() {
        database = nil
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// 2 = FULL (the commit waits for the disk), 1 = NORMAL.
    private static func level(_ c: Connection) throws -> Int64 {
        try XCTUnwrap(c.queryOne("PRAGMA synchronous")?.int("synchronous"))
    }

    func testAWriteAloneMarkedNotDurableSkipsTheDiskAndTheNextWriteWaitsAgain() throws {
        let committer = GroupCommitter(database: database, maxBatch: 16)
        let relaxed = try committer.write(durable: false) { c -> Int64 in
            try c.run("INSERT INTO t (n) VALUES (1)")
            return try Self.level(c)
        }
        let durable = try committer.write { c -> Int64 in
            try c.run("INSERT INTO t (n) VALUES (2)")
            return try Self.level(c)
        }
        let direct = try database.write { c in try Self.level(c) }
        XCTAssertEqual([relaxed, durable, direct], [1, 2, 2])
        XCTAssertEqual(try database.read { c in try c.queryOne("SELECT COUNT(*) AS n FROM t")?.int("n") }, 2, "both committed")
    }

    func testABatchWaitsForTheDiskWhenAnyOfItsWritesMust() throws {
        let committer = GroupCommitter(database: database, maxBatch: 16)
        let levels = Locked<[String: Int64]>([:])
        let holding = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        func spawn(_ label: String, durable: Bool, hold: Bool = false) {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                _ = try? committer.write(durable: durable) { c in
                    try c.run("INSERT INTO t (n) VALUES (1)")
                    let level = try Self.level(c)
                    levels.withLock { $0[label] = level }
                    if hold {
                        holding.signal()
                        gate.wait()
                    }
                }
            }
        }
        // The leader (not durable) holds its transaction open until both others queue behind it.
        spawn("leader", durable: false, hold: true)
        XCTAssertEqual(holding.wait(timeout: .now() + 20), .success)
        spawn("relaxed", durable: false)
        spawn("durable", durable: true)
        let deadline = Date().addingTimeInterval(20)
        while committer.queuedJobs < 2 && Date() < deadline { usleep(1000) }
        XCTAssertEqual(committer.queuedJobs, 2, "both writes queued behind the open transaction")
        gate.signal()
        XCTAssertEqual(group.wait(timeout: .now() + 20), .success)
        XCTAssertEqual(levels.current, ["leader": 1, "relaxed": 2, "durable": 2], "the batch holding a durable write waited for the disk")
        XCTAssertEqual(committer.statistics.batches, 2)
        XCTAssertEqual(try database.write { c in try Self.level(c) }, 2)
    }
}
