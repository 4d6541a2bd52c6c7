import Foundation
import TestSupport
import XCTest

@testable import Storage

/// A batch of jobs commits in one transaction with no savepoint; when one of its jobs throws,
/// the batch runs again with a savepoint per job, so that only the job that threw loses its
/// writes, and every other job's writes commit exactly once.
final class GroupCommitterBatchTests: StorageTestCase {
    private typealias Body = @Sendable (Connection) throws -> Int

    private struct Refused: Error {}

    func testABatchWhoseJobsAllSucceedRunsEachBodyOnceWithNoSecondAttempt() throws {
        let db = try open()
        let committer = GroupCommitter(database: db, maxBatch: 16)
        let runs = (0..<7).map { _ in Counter() }
        let results = runAsOneBatch(committer, queued: sevenInserts(counting: runs, throwingAt: nil))
        XCTAssertEqual(results, Array(repeating: "1", count: 7))
        XCTAssertEqual(runs.map(\.value), Array(repeating: 1, count: 7))
        XCTAssertEqual(committer.batchesRetriedWithSavepoints, 0)
        XCTAssertEqual(try count(db), 8)
    }

    func testWhenOneJobThrowsTheOthersRunAgainAndCommitOnceWhileItsWritesAreUndone() throws {
        let db = try open()
        let committer = GroupCommitter(database: db, maxBatch: 16)
        let runs = (0..<7).map { _ in Counter() }
        let results = runAsOneBatch(committer, queued: sevenInserts(counting: runs, throwingAt: 3))
        XCTAssertEqual(results, ["1", "1", "1", "Refused()", "1", "1", "1"])
        // The first attempt ran every body up to the one that threw; the second ran them all.
        XCTAssertEqual(runs.map(\.value), [2, 2, 2, 2, 1, 1, 1])
        XCTAssertEqual(committer.batchesRetriedWithSavepoints, 1)
        let names = try db.read { c in try c.query("SELECT name FROM items ORDER BY name").map { try $0.string("name") } }
        XCTAssertEqual(names, ["leader", "q0", "q1", "q2", "q4", "q5", "q6"])
    }

    /// Once the writer has run a batch with savepoints, the next compiles no SQL: the savepoint
    /// statements come from the cache like the rest, not parsed again for every job.
    func testSavepointStatementsComeFromTheCache() throws {
        let db = try open()
        let committer = GroupCommitter(database: db, maxBatch: 16)
        func batchWithOneRefusal(_ first: Int) {
            let results = runAsOneBatch(committer, leaderNumber: first, queued: (1...7).map { offset in
                { c in
                    let changed = try c.run("INSERT INTO items (name, qty) VALUES (?, ?)", [.text("n\(first + offset)"), SQLValue(offset)])
                    if offset == 7 { throw Refused() }
                    return changed
                }
            })
            XCTAssertEqual(results.last, "Refused()")
        }
        batchWithOneRefusal(100)
        let compiled = db.withWriter { $0.prepareCount }
        batchWithOneRefusal(200)
        XCTAssertEqual(db.withWriter { $0.prepareCount }, compiled, "the second batch compiled SQL")
        XCTAssertEqual(committer.batchesRetriedWithSavepoints, 2)
        XCTAssertEqual(try count(db), 14)
    }

    /// Seven jobs, each inserting `q<index>` and counting its runs; the one at `throwingAt`
    /// throws after its insert.
    private func sevenInserts(counting runs: [Counter], throwingAt failing: Int?) -> [Body] {
        (0..<7).map { index in
            { c in
                runs[index].add()
                let changed = try c.run("INSERT INTO items (name, qty) VALUES (?, ?)", [.text("q\(index)"), SQLValue(index)])
                if index == failing { throw Refused() }
                return changed
            }
        }
    }

    /// Runs a leader's job alone, holding its transaction open until every job of `queued` waits
    /// behind it, so that they then commit as one batch. Each queued job's result, in order: its
    /// value, or its error's description.
    private func runAsOneBatch(_ committer: GroupCommitter, leaderNumber: Int = 0, queued: [Body]) -> [String] {
        let leaderInside = Blocker()
        let writers = DispatchGroup()
        let results = Locked([String](repeating: "", count: queued.count))
        // A thread each: GCD's pool adds threads slowly while they block.
        func onItsOwnThread(_ body: @escaping @Sendable () -> Void) {
            writers.enter()
            Thread.detachNewThread {
                body()
                writers.leave()
            }
        }
        let leaderName = leaderNumber == 0 ? "leader" : "n\(leaderNumber)"
        onItsOwnThread {
            _ = try? committer.write { c in
                leaderInside.hold()
                return try c.run("INSERT INTO items (name, qty) VALUES (?, ?)", [.text(leaderName), 0])
            }
        }
        XCTAssertTrue(leaderInside.waitUntilHeld())
        for (index, body) in queued.enumerated() {
            onItsOwnThread {
                let outcome: String
                do { outcome = String(try committer.write(body)) } catch { outcome = String(describing: error) }
                results.withLock { $0[index] = outcome }
            }
            // In order: each queues before the next starts.
            XCTAssertTrue(eventually { committer.queuedJobs == index + 1 })
        }
        leaderInside.release()
        writers.wait()
        XCTAssertEqual(committer.statistics.batches % 2, 0, "the leader alone, then the queued jobs together")
        return results.current
    }
}
