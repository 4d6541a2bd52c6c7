import FoundationEssentials
import Platform

/// A fixed set of joinable threads for blocking work (SQLite, scrypt),
/// fed by a bounded queue. Work may carry the caller's deadline; then the pool sheds load:
///
/// - Admission: work is refused at once if it cannot finish before its deadline by the estimate
///   `now + wait + service`, where `service` is the moving average of recent run times and
///   `wait` is 0 while a thread is free, else `(queued + 1) × service / threads`. The caller
///   answers `overloaded`.
/// - Pickup: work that can no longer finish in time when a thread takes it (its deadline is
///   closer than `service`, or has passed) is dropped without running: nobody will read its
///   answer. Its `expired` callback runs instead (the router answers `timeout` at once).
///
/// Work that awaits another service (`submitTask`) runs as a Swift task whose executor is this
/// pool: it holds a thread while it computes and none while it waits for the answer, which
/// comes back as a resumption queued here. So the pool's size does not depend on how slow the
/// next service is.
///
/// `shutdown` lets queued work and started tasks finish and ends the threads; `awaitTermination`
/// joins them.
public final class WorkerPool: TaskExecutor, @unchecked Sendable {
    /// What `submit` decided.
    public enum Admission: Sendable, Equatable {
        case accepted
        /// The queue holds `maxQueued` items already.
        case queueFull
        /// By the estimate above, the work would finish after its deadline.
        case cannotFinishInTime
        /// `shutdown` was called.
        case stopping
    }

    private struct Job {
        let work: @Sendable () -> Void
        let deadlineMilliseconds: Int64?
        let expired: (@Sendable () -> Void)?
    }

    /// Weight of the newest run time in the moving average (1/8: smooth, yet follows a change
    /// of load within a few dozen runs).
    private static let averageWeightDivisor: Int64 = 8

    private let condition = Condition()
    private var queue: [Job] = []
    private var queueHead = 0
    private let maxQueued: Int
    private let threadCount: Int
    private var stopping = false
    private var threads: [JoinableThread] = []
    private var liveThreads = 0
    private var joined = false
    private var busy = 0
    private var averageServiceMicroseconds: Int64 = 0
    private var expired: Int64 = 0
    /// Tasks started by `submitTask` and not finished: the threads stay while any is waiting
    /// for an answer, since its resumption must find a thread.
    private var tasksInFlight = 0

    public init(threadCount: Int, maxQueued: Int, name: String = "worker") {
        precondition(threadCount > 0 && maxQueued > 0)
        self.maxQueued = maxQueued
        self.threadCount = threadCount
        liveThreads = threadCount
        for index in 0..<threadCount {
            // Each thread keeps the pool alive until `shutdown()` lets it return.
            threads.append(JoinableThread(name: "\(name)-\(index)") { self.workLoop() })
        }
    }

    /// Queues `work` without a deadline; false when the queue is full or the pool is stopping.
    @discardableResult
    public func submit(_ work: @escaping @Sendable () -> Void) -> Bool {
        submit(deadlineMilliseconds: nil, work, expired: nil) == .accepted
    }

    /// Queues `work` that is useless after `deadlineMilliseconds` (monotonic clock), or refuses it.
    /// When the deadline passes before a thread takes the work, `expired` runs instead of `work`.
    public func submit(
        deadlineMilliseconds: Int64?, _ work: @escaping @Sendable () -> Void, expired: (@Sendable () -> Void)?
    ) -> Admission {
        condition.lock()
        let admission = admissionLocked(deadlineMilliseconds: deadlineMilliseconds)
        if admission == .accepted { queue.append(Job(work: work, deadlineMilliseconds: deadlineMilliseconds, expired: expired)) }
        condition.unlock()
        // After unlocking: a thread woken while the lock is still held wakes only to sleep on it
        // again (two more context switches). A thread that looks before this signal finds the work.
        if admission == .accepted { condition.signal() }
        return admission
    }

    /// `submit` for work that awaits (calls to other services): admitted by the same rules,
    /// it then runs as a task on this pool, resumed here after each wait. A resumption is
    /// never refused: its work was admitted already.
    public func submitTask(
        deadlineMilliseconds: Int64?, _ work: @escaping @Sendable () async -> Void, expired: (@Sendable () -> Void)?
    ) -> Admission {
        submit(deadlineMilliseconds: deadlineMilliseconds, { [self] in
            condition.lock()
            tasksInFlight += 1
            condition.unlock()
            Task(executorPreference: self) {
                await work()
                self.taskEnded()
            }
        }, expired: expired)
    }

    private func taskEnded() {
        condition.lock()
        tasksInFlight -= 1
        let last = tasksInFlight == 0 && stopping
        condition.unlock()
        if last { condition.broadcast() }
    }

    /// A task's next part, queued past every limit (see `submitTask`).
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        condition.lock()
        queue.append(Job(work: { job.runSynchronously(on: executor) }, deadlineMilliseconds: nil, expired: nil))
        condition.unlock()
        condition.signal()
    }

    private func admissionLocked(deadlineMilliseconds: Int64?) -> Admission {
        guard !stopping else { return .stopping }
        let queued = queue.count - queueHead
        guard queued < maxQueued else { return .queueFull }
        if let deadlineMilliseconds, MonotonicClock.nowMilliseconds() + estimatedFinishMillisecondsLocked(queued: queued) > deadlineMilliseconds {
            return .cannotFinishInTime
        }
        return .accepted
    }

    private func estimatedFinishMillisecondsLocked(queued: Int) -> Int64 {
        let service = averageServiceMicroseconds
        let wait = busy + queued < threadCount ? 0 : Int64(queued + 1) * service / Int64(threadCount)
        return (wait + service) / 1000
    }

    /// Threads running work right now.
    public var busyCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return busy
    }

    public var queuedCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return queue.count - queueHead
    }

    /// Work dropped at pickup because it could no longer finish before its deadline, since start.
    public var expiredCount: Int64 {
        condition.lock()
        defer { condition.unlock() }
        return expired
    }

    /// The moving average of run times the admission estimate uses, in microseconds.
    public var averageServiceTimeMicroseconds: Int64 {
        condition.lock()
        defer { condition.unlock() }
        return averageServiceMicroseconds
    }

    /// True once every thread has returned (after `shutdown` and the queue's last work).
    public var hasEnded: Bool {
        condition.lock()
        defer { condition.unlock() }
        return liveThreads == 0
    }

    /// Refuses new work; queued work and started tasks still run (or expire), then the threads end.
    public func shutdown() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    /// After `shutdown`: waits until every thread has ended or the monotonic clock reaches
    /// `deadlineMilliseconds`. True when they all ended, and then they are joined.
    public func awaitTermination(untilMilliseconds deadlineMilliseconds: Int64) -> Bool {
        condition.lock()
        precondition(stopping, "awaitTermination before shutdown")
        while liveThreads > 0 {
            let remaining = deadlineMilliseconds - MonotonicClock.nowMilliseconds()
            if remaining <= 0 { break }
            _ = condition.wait(until: Date(timeIntervalSinceNow: Double(remaining) / 1000))
        }
        let ended = liveThreads == 0
        let toJoin = ended && !joined ? threads : []
        if ended { joined = true }
        condition.unlock()
        for thread in toJoin { thread.join() }
        return ended
    }

    /// `shutdown`, then waits up to `timeoutMilliseconds` for the threads and joins them (for
    /// owners without a drain deadline of their own: tools and tests). False if one is still busy.
    @discardableResult
    public func shutdownAndJoin(timeoutMilliseconds: Int64 = 10_000) -> Bool {
        shutdown()
        return awaitTermination(untilMilliseconds: MonotonicClock.nowMilliseconds() + timeoutMilliseconds)
    }

    private func workLoop() {
        condition.lock()
        while true {
            while queueHead == queue.count && !(stopping && tasksInFlight == 0) { condition.wait() }
            if queueHead == queue.count { break }
            let job = queue[queueHead]
            queueHead += 1
            if queueHead > 1024 && queueHead * 2 > queue.count {
                queue.removeFirst(queueHead)
                queueHead = 0
            }
            if let deadline = job.deadlineMilliseconds, MonotonicClock.nowMilliseconds() + averageServiceMicroseconds / 1000 >= deadline {
                expired += 1
                condition.unlock()
                job.expired?()
                condition.lock()
                continue
            }
            busy += 1
            condition.unlock()
            let started = MonotonicClock.nowMicroseconds()
            job.work()
            let elapsed = MonotonicClock.nowMicroseconds() - started
            condition.lock()
            busy -= 1
            if averageServiceMicroseconds == 0 {
                averageServiceMicroseconds = max(1, elapsed)
            } else {
                averageServiceMicroseconds += (elapsed - averageServiceMicroseconds) / Self.averageWeightDivisor
            }
        }
        liveThreads -= 1
        if liveThreads == 0 { condition.broadcast() }
        condition.unlock()
    }
}
