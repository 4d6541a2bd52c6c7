import CLinux
import Foundation
import Glibc

/// Readiness of a registered file descriptor, as the loop reports it.
public struct Readiness: Sendable {
    public let readable: Bool
    public let writable: Bool
    public let hangup: Bool
}

/// Something registered on the loop. Called on the loop thread only.
public protocol EventHandler: AnyObject {
    func handle(_ readiness: Readiness)
}

/// One thread, one epoll set. Sockets and timers are confined to the loop thread; other
/// threads hand work to it with `execute`, which wakes the loop through an eventfd.
///
/// Marked `@unchecked Sendable` because its mutable state is either guarded by `taskLock`
/// (the task queue) or touched only on the loop thread (handlers and timers).
public final class EventLoop: @unchecked Sendable {
    private let epollFD: Int32
    private let wakeFD: Int32
    private var handlers: [Int32: EventHandler] = [:]
    private var timers: [RepeatingTimer] = []
    private let taskLock = NSLock()
    private var tasks: [() -> Void] = []
    private var wakePending = false
    private var stopRequested = false
    private var loopThreadID: pthread_t?  // guarded by taskLock: read from any thread
    /// Channels with output queued during this iteration; flushed once at its end, so many
    /// answers to one peer leave in one `send`.
    private var channelsToFlush: [Channel] = []
    /// One read buffer per loop: channels read into it and hand the bytes on at once.
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    private struct RepeatingTimer {
        let intervalMilliseconds: Int64
        var nextMilliseconds: Int64
        let action: () -> Void
    }

    public init() throws(SystemError) {
        epollFD = try systemCallOrThrow("epoll_create1") { lk_epoll_create() }
        wakeFD = try systemCallOrThrow("eventfd") { lk_eventfd() }
        try systemCallOrThrow("epoll_ctl(wake)") { lk_epoll_add(epollFD, wakeFD, LK_EPOLL_IN) }
    }

    deinit {
        Glibc.close(wakeFD)
        Glibc.close(epollFD)
        readBuffer.deallocate()
    }

    /// True on the thread running `run()`. Safe from any thread (the id is set under `taskLock`).
    public var isInLoopThread: Bool {
        taskLock.lock()
        let loopThread = loopThreadID
        taskLock.unlock()
        guard let loopThread else { return false }
        return pthread_equal(loopThread, pthread_self()) != 0
    }

    // MARK: Registration (loop thread)

    func register(_ fd: Int32, readable: Bool, writable: Bool, handler: EventHandler) throws(SystemError) {
        precondition(handlers[fd] == nil, "fd \(fd) registered twice")
        try systemCallOrThrow("epoll_ctl(add)") { lk_epoll_add(epollFD, fd, Self.mask(readable, writable)) }
        handlers[fd] = handler
    }

    func reregister(_ fd: Int32, readable: Bool, writable: Bool) {
        guard handlers[fd] != nil else { return }
        _ = lk_epoll_modify(epollFD, fd, Self.mask(readable, writable))
    }

    func unregister(_ fd: Int32) {
        guard handlers.removeValue(forKey: fd) != nil else { return }
        _ = lk_epoll_remove(epollFD, fd)
    }

    private static func mask(_ readable: Bool, _ writable: Bool) -> UInt32 {
        // No EPOLLRDHUP: it is level-triggered and would spin once a peer half-closes;
        // end of input is seen as a zero-byte read instead.
        var mask: UInt32 = 0
        if readable { mask |= LK_EPOLL_IN }
        if writable { mask |= LK_EPOLL_OUT }
        return mask
    }

    /// Runs `action` on the loop thread every `intervalMilliseconds`, first after one interval.
    public func scheduleRepeating(everyMilliseconds intervalMilliseconds: Int64, _ action: @escaping () -> Void) {
        precondition(intervalMilliseconds > 0)
        let timer = RepeatingTimer(
            intervalMilliseconds: intervalMilliseconds,
            nextMilliseconds: MonotonicClock.nowMilliseconds() + intervalMilliseconds, action: action)
        if isInLoopThread {
            timers.append(timer)
        } else {
            nonisolatedExecute { self.timers.append(timer) }
        }
    }

    // MARK: Cross-thread

    /// Queues `task` to run on the loop thread soon. Safe from any thread.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        nonisolatedExecute(task)
    }

    private func nonisolatedExecute(_ task: @escaping () -> Void) {
        taskLock.lock()
        tasks.append(task)
        let needsWake = !wakePending
        wakePending = true
        taskLock.unlock()
        if needsWake {
            var one: UInt64 = 1
            _ = Glibc.write(wakeFD, &one, 8)
        }
    }

    /// Asks `run()` to return after the current iteration. Safe from any thread.
    public func stop() {
        nonisolatedExecute { self.stopRequested = true }
    }

    // MARK: Running

    /// Runs the loop on the calling thread until `stop()`.
    public func run() {
        taskLock.lock()
        loopThreadID = pthread_self()
        taskLock.unlock()
        let capacity = 256
        var readyFDs = [Int32](repeating: 0, count: capacity)
        var readyEvents = [UInt32](repeating: 0, count: capacity)
        while !stopRequested {
            let count = lk_epoll_wait(epollFD, &readyFDs, &readyEvents, Int32(capacity), Int32(millisecondsUntilNextTimer()))
            if count < 0 {
                if Glibc.errno == EINTR { continue }
                fatalError("epoll_wait failed: errno \(Glibc.errno)")
            }
            for index in 0..<Int(count) {
                let fd = readyFDs[index]
                let events = readyEvents[index]
                if fd == wakeFD {
                    var value: UInt64 = 0
                    _ = Glibc.read(wakeFD, &value, 8)
                    continue
                }
                guard let handler = handlers[fd] else { continue }
                handler.handle(Readiness(
                    readable: events & LK_EPOLL_IN != 0,
                    writable: events & LK_EPOLL_OUT != 0,
                    hangup: events & (LK_EPOLL_HUP | LK_EPOLL_ERR) != 0))
            }
            runTasks()
            runDueTimers()
            flushChannels()
        }
        runTasks()
        flushChannels()
        // A stopped loop lets go of everything registered on it, so handlers and timers that
        // point back at the loop do not keep each other alive.
        for fd in Array(handlers.keys) { unregister(fd) }
        timers.removeAll()
        channelsToFlush.removeAll()
    }

    /// Called by a channel the first time it queues output in an iteration.
    func scheduleFlush(_ channel: Channel) {
        channelsToFlush.append(channel)
    }

    private func flushChannels() {
        // Bounded: flushing cannot schedule more flushes (a channel flushes all it has).
        let pending = channelsToFlush
        channelsToFlush.removeAll(keepingCapacity: true)
        for channel in pending { channel.flushScheduled() }
    }

    private func runTasks() {
        // Bounded: tasks queued while these run wait for the next iteration, so sockets keep being served.
        taskLock.lock()
        let batch = tasks
        tasks.removeAll(keepingCapacity: true)
        wakePending = false
        taskLock.unlock()
        for task in batch { task() }
    }

    private func millisecondsUntilNextTimer() -> Int64 {
        guard let next = timers.map(\.nextMilliseconds).min() else { return 1000 }
        return max(0, min(1000, next - MonotonicClock.nowMilliseconds()))
    }

    private func runDueTimers() {
        let now = MonotonicClock.nowMilliseconds()
        for index in timers.indices where timers[index].nextMilliseconds <= now {
            timers[index].nextMilliseconds = now + timers[index].intervalMilliseconds
            timers[index].action()
        }
    }
}
