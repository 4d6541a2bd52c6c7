import FoundationEssentials
import Platform
import Runtime

/// What one pass over a delivery queue did.
public enum DeliveryPass: Sendable, Equatable {
    case nothingDue
    /// It handled one item; `moreDue` when another was already due as it took this one.
    case handled(moreDue: Bool)

    /// For a queue that cannot tell whether more is due: after an item, look again.
    public init(handled: Bool) { self = handled ? .handled(moreDue: true) : .nothingDue }
}

/// Runs a durable delivery queue on its own bounded set of threads, apart from the request
/// workers: a slow provider holds at most `workerCount` delivery threads and never an answer.
/// `sendNext` takes one due item from the queue and handles it.
/// `wake()` is cheap and never blocks (an event-loop timer calls it for retries that fall due);
/// each woken worker runs `sendNext` while something is due.
public final class DeliveryWorkers: @unchecked Sendable {
    private let sendNext: @Sendable () -> DeliveryPass
    private let logger: Logger
    private let pool: WorkerPool
    /// The threads themselves, for the exit path's log line.
    public var threads: WorkerPool { pool }
    private let workerCount: Int
    private let condition = Condition()
    private var active = 0
    /// Set by `wake()`: some worker must look at the queue (again) before it ends.
    private var wakeRequested = false
    private var stopping = false

    public init(workerCount: Int, name: String, logger: Logger, sendNext: @escaping @Sendable () -> DeliveryPass) {
        precondition(workerCount > 0)
        self.sendNext = sendNext
        self.logger = logger
        self.workerCount = workerCount
        pool = WorkerPool(threadCount: workerCount, maxQueued: workerCount, name: name)
    }

    public func wake() {
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

    /// Sends what is due until the queue has nothing due or `deadlineMilliseconds` (monotonic)
    /// passes, then stops and joins the threads. Whatever is left stays queued for the next
    /// start. False when a send is still running (its thread cannot be joined): the caller must
    /// then leave without running at-exit cleanup.
    @discardableResult
    public func stop(deadlineMilliseconds: Int64) -> Bool {
        wake()  // a last look at the queue
        condition.lock()
        while active > 0 {
            let left = deadlineMilliseconds - MonotonicClock.nowMilliseconds()
            if left <= 0 || !condition.wait(until: Date().addingTimeInterval(Double(left) / 1000)) { break }
        }
        stopping = true
        let ended = active == 0
        condition.unlock()
        pool.shutdown()
        if !ended { logger.warning("exiting with messages still being sent; they are sent again after the restart") }
        return pool.awaitTermination(untilMilliseconds: max(deadlineMilliseconds, MonotonicClock.nowMilliseconds()) + 1000)
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
            // Another message already due: look again, and let an idle worker help. Otherwise the
            // worker ends, unless a message queued since its claim woke it: a look that would find
            // the queue empty costs a write transaction and two context switches per message.
            if sendNext() == .handled(moreDue: true) { wake() }
        }
    }
}

/// Tells whoever drains a queue that something was just queued (the process wakes its
/// `DeliveryWorkers`; unit tests run the queue at once on the calling thread).
public final class DeliveryWakeup: @unchecked Sendable {
    private let lock = Lock()
    private var handler: (@Sendable () -> Void)?

    public init() {}

    public func onQueued(_ handler: @escaping @Sendable () -> Void) {
        lock.lock()
        self.handler = handler
        lock.unlock()
    }

    public func fire() {
        lock.lock()
        let handler = self.handler
        lock.unlock()
        handler?()
    }
}
