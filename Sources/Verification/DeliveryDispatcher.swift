import Foundation
import ServiceKit

/// Runs the delivery queue on its own bounded set of threads, apart from the request workers:
/// a slow provider holds at most `workerCount` delivery threads and never an answer.
/// `wake()` is cheap and never blocks (the event loop's timer calls it for retries that fall
/// due); each woken worker sends until nothing is due.
final class DeliveryDispatcher: @unchecked Sendable {
    private let service: VerificationService
    private let logger: Logger
    private let pool: WorkerPool
    private let workerCount: Int
    private let condition = NSCondition()
    private var active = 0
    /// Set by `wake()`: some worker must look at the queue (again) before it ends.
    private var wakeRequested = false
    private var stopping = false

    init(service: VerificationService, workerCount: Int, logger: Logger) {
        precondition(workerCount > 0)
        self.service = service
        self.logger = logger
        self.workerCount = workerCount
        pool = WorkerPool(threadCount: workerCount, maxQueued: workerCount, name: "delivery")
    }

    func wake() {
        condition.lock()
        wakeRequested = true
        guard !stopping, active < workerCount else {
            condition.unlock()
            return
        }
        active += 1
        condition.unlock()
        if !pool.submit({ [self] in drain() }) {
            condition.lock()
            active -= 1
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Stops taking messages and waits for sends under way, until `deadlineMilliseconds`
    /// (monotonic). Whatever is left stays queued for the next start. True if all ended.
    @discardableResult
    func stop(deadlineMilliseconds: Int64) -> Bool {
        condition.lock()
        stopping = true
        while active > 0 {
            let left = deadlineMilliseconds - MonotonicClock.nowMilliseconds()
            if left <= 0 || !condition.wait(until: Date().addingTimeInterval(Double(left) / 1000)) { break }
        }
        let ended = active == 0
        condition.unlock()
        pool.shutdown()
        if !ended { logger.warning("exiting with messages still being sent; they are resent after the restart") }
        return ended
    }

    /// Sends while something is due. The decision to end is taken under the lock that `wake()`
    /// takes, so a wake-up is never lost between "nothing due" and the worker's end.
    private func drain() {
        while true {
            condition.lock()
            if stopping || !wakeRequested {
                active -= 1
                condition.broadcast()
                condition.unlock()
                return
            }
            wakeRequested = false
            condition.unlock()
            // After a send more may be due: wake again, which also lets an idle worker help.
            if service.sendNextQueuedDelivery(logger: logger) { wake() }
        }
    }
}
