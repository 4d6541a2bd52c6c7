import Foundation

/// A fixed set of threads for blocking work (SQLite, scrypt, calls to other services),
/// fed by a bounded queue: when it is full, `submit` says no at once instead of queueing
/// without limit, and the caller answers `overloaded`.
public final class WorkerPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [@Sendable () -> Void] = []
    private var queueHead = 0
    private let maxQueued: Int
    private var stopping = false
    private var threads: [Thread] = []
    private var busy = 0

    public init(threadCount: Int, maxQueued: Int, name: String = "worker") {
        precondition(threadCount > 0 && maxQueued > 0)
        self.maxQueued = maxQueued
        for index in 0..<threadCount {
            // Each thread keeps the pool alive until `shutdown()` lets it return.
            let thread = Thread { self.workLoop() }
            thread.name = "\(name)-\(index)"
            thread.stackSize = 1 << 20
            threads.append(thread)
            thread.start()
        }
    }

    /// Queues `work`; false when the queue is full or the pool is stopping.
    @discardableResult
    public func submit(_ work: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping, queue.count - queueHead < maxQueued else { return false }
        queue.append(work)
        condition.signal()
        return true
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

    /// Lets queued work finish, then ends the threads.
    public func shutdown() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    private func workLoop() {
        while true {
            condition.lock()
            while queueHead == queue.count && !stopping { condition.wait() }
            if queueHead == queue.count {
                condition.unlock()
                return
            }
            let work = queue[queueHead]
            queueHead += 1
            if queueHead > 1024 && queueHead * 2 > queue.count {
                queue.removeFirst(queueHead)
                queueHead = 0
            }
            busy += 1
            condition.unlock()
            work()
            condition.lock()
            busy -= 1
            condition.unlock()
        }
    }
}
