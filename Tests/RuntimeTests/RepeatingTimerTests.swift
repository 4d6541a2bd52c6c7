import Foundation
import Platform
import Runtime
import ServerTestSupport
import TestSupport
import XCTest

/// A repeating timer runs until cancelled, and a cancelled timer lets go of its action: a server
/// stopped on a loop that keeps running must not stay referenced by its timers.
final class RepeatingTimerTests: XCTestCase {
    private var thread: LoopThread!

    override func setUpWithError() throws { thread = try LoopThread() }
    override func tearDown() { thread.shutdown() }

    /// Something a timer's action holds, to see when the loop lets go of it.
    private final class Held: @unchecked Sendable {}

    func testCancelledFromAnotherThreadLetsGoOfWhatTheActionHolds() throws {
        let ticks = Counter()
        weak var released: Held?
        let timer: RepeatingTimerHandle = try {
            let held = Held()
            released = held
            return try thread.sync { [loop = thread.loop] in
                loop.scheduleRepeating(everyMilliseconds: 1) { withExtendedLifetime(held) { ticks.add() } }
            }
        }()
        waitUntil("the timer ticks") { ticks.value >= 3 }
        XCTAssertNotNil(released, "the loop holds the action while the timer runs")
        timer.cancel()
        // The cancel is a task for the loop; a round-trip after it sees it done.
        try thread.sync {}
        XCTAssertNil(released, "a cancelled timer's action, and what it holds, are let go")
        let afterCancel = ticks.value
        let witness = Counter()
        thread.loop.scheduleRepeating(everyMilliseconds: 1) { witness.add() }
        waitUntil("another timer ticks five times") { witness.value >= 5 }
        XCTAssertEqual(ticks.value, afterCancel, "a cancelled timer never runs again")
    }

    func testATimerCancelledByItsOwnActionRunsOnce() throws {
        let ticks = Counter()
        let witness = Counter()
        try thread.sync { [loop = thread.loop] in
            let handle = Locked<RepeatingTimerHandle?>(nil)
            handle.withLock {
                $0 = loop.scheduleRepeating(everyMilliseconds: 1) {
                    ticks.add()
                    handle.withLock { $0?.cancel() }
                }
            }
            loop.scheduleRepeating(everyMilliseconds: 1) { witness.add() }
        }
        waitUntil("the other timer ticks five times") { witness.value >= 5 }
        XCTAssertEqual(ticks.value, 1)
    }

    /// Both due in the same turn: the first cancels the second, which then does not run.
    func testATimerCancelledByAnEarlierOneInTheSameTurnDoesNotRun() throws {
        let cancelled = Counter()
        let witness = Counter()
        try thread.sync { [loop = thread.loop] in
            let victim = Locked<RepeatingTimerHandle?>(nil)
            loop.scheduleRepeating(everyMilliseconds: 5) { victim.withLock { $0?.cancel() } }
            victim.withLock { $0 = loop.scheduleRepeating(everyMilliseconds: 5) { cancelled.add() } }
            loop.scheduleRepeating(everyMilliseconds: 5) { witness.add() }
        }
        waitUntil("the third timer ticks three times") { witness.value >= 3 }
        XCTAssertEqual(cancelled.value, 0)
    }

    /// Scheduled from another thread and cancelled on the loop before the loop has taken it in,
    /// by a task of the same turn that runs once the timer is due: it still never runs.
    func testCancelledOnTheLoopBeforeTheLoopTookItInNeverRuns() throws {
        let ticks = Counter()
        let witness = Counter()
        let handle = Locked<RepeatingTimerHandle?>(nil)
        let due = Locked<Int64>(.max)
        let gate = DispatchSemaphore(value: 0)
        // Holds the loop, so that the cancel and the timer's joining run in one later turn.
        thread.loop.execute { gate.wait() }
        thread.loop.execute {
            while MonotonicClock.nowMilliseconds() < due.withLock({ $0 }) {}
            handle.withLock { $0?.cancel() }
        }
        handle.withLock { $0 = thread.loop.scheduleRepeating(everyMilliseconds: 1) { ticks.add() } }
        due.withLock { $0 = MonotonicClock.nowMilliseconds() + 2 }
        gate.signal()
        thread.loop.scheduleRepeating(everyMilliseconds: 1) { witness.add() }
        waitUntil("another timer ticks five times") { witness.value >= 5 }
        XCTAssertEqual(ticks.value, 0)
    }
}
