import Foundation
@testable import Platform
@testable import Runtime
import TestSupport
import XCTest

/// Load shedding and joining in `WorkerPool` (a worker never runs work whose caller has gone, and every thread is joined). Work is counted, never
/// timed: a test proves what ran and what did not.
final class WorkerPoolDeadlineTests: XCTestCase {
    func testWorkQueuedPastItsDeadlineNeverRunsAndItsExpiryIsCalledInstead() {
        let pool = WorkerPool(threadCount: 1, maxQueued: 100)
        let blocker = Blocker()
        XCTAssertTrue(pool.submit { blocker.hold() })
        blocker.waitUntilHeld()
        let runs = Counter()
        let expiries = Counter()
        let deadline = MonotonicClock.nowMilliseconds() + 100
        for _ in 0..<20 {
            let admission = pool.submit(deadlineMilliseconds: deadline, { runs.add() }, expired: { expiries.add() })
            XCTAssertEqual(admission, .accepted, "no run time observed yet: nothing to refuse on")
        }
        let keeper = pool.submit(deadlineMilliseconds: deadline + 60_000, { runs.add() }, expired: { expiries.add() })
        XCTAssertEqual(keeper, .accepted)
        waitUntil("the deadline passes while the work is queued") { MonotonicClock.nowMilliseconds() > deadline }
        blocker.release()
        pool.shutdown()
        XCTAssertTrue(pool.awaitTermination(untilMilliseconds: MonotonicClock.nowMilliseconds() + 10_000))
        XCTAssertEqual(runs.value, 1, "only the work whose deadline had not passed ran")
        XCTAssertEqual(expiries.value, 20)
        XCTAssertEqual(pool.expiredCount, 20)
    }

    func testAdmissionRefusesAtOnceWhatCannotFinishBeforeItsDeadline() {
        let pool = WorkerPool(threadCount: 1, maxQueued: 100)
        // One run of at least 100 ms teaches the pool its service time.
        XCTAssertTrue(pool.submit {
            let end = MonotonicClock.nowMicroseconds() + 100_000
            while MonotonicClock.nowMicroseconds() < end {}
        })
        waitUntil("the first run is measured") { pool.averageServiceTimeMicroseconds >= 100_000 }
        let blocker = Blocker()
        XCTAssertTrue(pool.submit { blocker.hold() })
        blocker.waitUntilHeld()
        let runs = Counter()
        let now = MonotonicClock.nowMilliseconds()
        // The only thread is busy: the next work starts after ~one service time and needs another.
        XCTAssertEqual(pool.submit(deadlineMilliseconds: now + 50, { runs.add() }, expired: nil), .cannotFinishInTime)
        XCTAssertEqual(pool.submit(deadlineMilliseconds: now + 60_000, { runs.add() }, expired: nil), .accepted)
        XCTAssertEqual(pool.queuedCount, 1, "the refused work was never queued")
        blocker.release()
        pool.shutdown()
        XCTAssertTrue(pool.awaitTermination(untilMilliseconds: MonotonicClock.nowMilliseconds() + 10_000))
        XCTAssertEqual(runs.value, 1)
    }

    func testWorkTakenTooCloseToItsDeadlineToFinishIsDroppedUnrun() {
        let pool = WorkerPool(threadCount: 1, maxQueued: 100)
        XCTAssertTrue(pool.submit {
            let end = MonotonicClock.nowMicroseconds() + 100_000
            while MonotonicClock.nowMicroseconds() < end {}
        })
        waitUntil("the first run is measured") { pool.averageServiceTimeMicroseconds >= 100_000 }
        let blocker = Blocker()
        XCTAssertTrue(pool.submit { blocker.hold() })
        blocker.waitUntilHeld()
        let runs = Counter()
        let expiries = Counter()
        let deadline = MonotonicClock.nowMilliseconds() + 400
        XCTAssertEqual(pool.submit(deadlineMilliseconds: deadline, { runs.add() }, expired: { expiries.add() }), .accepted)
        // Released with less time left than one run takes: running it would only produce a late answer.
        waitUntil("less than one service time is left") { MonotonicClock.nowMilliseconds() >= deadline - 50 }
        blocker.release()
        pool.shutdown()
        XCTAssertTrue(pool.awaitTermination(untilMilliseconds: MonotonicClock.nowMilliseconds() + 10_000))
        XCTAssertEqual(runs.value, 0)
        XCTAssertEqual(expiries.value, 1)
    }

    func testWithAFreeThreadOnlyTheWorksOwnRunTimeCounts() {
        let pool = WorkerPool(threadCount: 2, maxQueued: 10)
        XCTAssertTrue(pool.submit {
            let end = MonotonicClock.nowMicroseconds() + 100_000
            while MonotonicClock.nowMicroseconds() < end {}
        })
        waitUntil("the first run is measured") { pool.averageServiceTimeMicroseconds >= 100_000 && pool.busyCount == 0 }
        let runs = Counter()
        let now = MonotonicClock.nowMilliseconds()
        XCTAssertEqual(pool.submit(deadlineMilliseconds: now + 50, { runs.add() }, expired: nil), .cannotFinishInTime, "shorter than one run")
        XCTAssertEqual(pool.submit(deadlineMilliseconds: now + 5_000, { runs.add() }, expired: nil), .accepted, "no wait: a thread is free")
        pool.shutdown()
        XCTAssertTrue(pool.awaitTermination(untilMilliseconds: MonotonicClock.nowMilliseconds() + 10_000))
        XCTAssertEqual(runs.value, 1)
    }

    func testTerminationIsBoundedByItsDeadlineAndJoinsOnceTheThreadsEnd() {
        let pool = WorkerPool(threadCount: 4, maxQueued: 10)
        let blocker = Blocker()
        XCTAssertTrue(pool.submit { blocker.hold() })
        blocker.waitUntilHeld()
        pool.shutdown()
        XCTAssertFalse(pool.submit {}, "a stopping pool takes no new work")
        XCTAssertFalse(pool.awaitTermination(untilMilliseconds: MonotonicClock.nowMilliseconds() + 100), "a busy thread outlives the deadline")
        XCTAssertFalse(pool.hasEnded)
        blocker.release()
        XCTAssertTrue(pool.awaitTermination(untilMilliseconds: MonotonicClock.nowMilliseconds() + 10_000))
        XCTAssertTrue(pool.hasEnded)
    }
}
