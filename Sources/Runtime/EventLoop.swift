import FoundationEssentials
import Platform
import Synchronization

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

/// One thread, one set of watched descriptors (an `EventBackend`: epoll or poll). Sockets and
/// timers are confined to the loop thread; other threads hand work to it with `execute`, which
/// wakes the loop through an eventfd.
///
/// Marked `@unchecked Sendable` because its mutable state is either guarded by `taskLock`
/// (the task queue) or touched only on the loop thread (handlers and timers).
public final class EventLoop: @unchecked Sendable {
    public let backendKind: EventBackendKind
    private let backend: EventBackend
    private let wakeup: WakeupSignal
    /// Each registration's token and handler. An event whose token is not the fd's current one
    /// belongs to a descriptor closed earlier in this turn (its number may already be reused).
    private var handlers: [Int32: (token: UInt64, handler: EventHandler)] = [:]
    private var fdsByToken: [UInt64: Int32] = [:]
    private var nextToken: UInt64 = 1
    private static let wakeToken: UInt64 = 0
    private var timers: [RepeatingTimer] = []
    private let taskLock = Lock()
    private var nextTimerID: UInt64 = 0  // under taskLock: timers are scheduled from any thread
    /// Timers scheduled from another thread whose task to join `timers` has not run yet (under
    /// taskLock). Cancelling one takes it out of here, and its task then adds nothing.
    private var timersOnTheirWay: Set<UInt64> = []
    private var tasks: [() -> Void] = []
    private var wakePending = false
    private var stopRequested = false
    /// Set by `run()` on its thread. Before it, the thread setting the loop up owns its state.
    private let running = Atomic<Bool>(false)
    /// Turns of `run` so far. Loop thread only: a handler tells the work of one turn from the next's.
    public var iteration: UInt64 { turns }
    /// When the current step of this turn began (`MonotonicClock`, ms): its wait's end, then its
    /// tasks, then its timers. The now of the deadlines of the requests handled in that step,
    /// instead of a clock read each (several per request). Earlier than the clock by at most one
    /// step, so a deadline only comes sooner, and a timer's call (a health probe's 200 ms) is
    /// timed from when it runs. Loop thread only.
    public var stepMilliseconds: Int64 { stepStarted }
    // Read on every request: plain integers, so skipping Swift's run-time exclusivity check on
    // them costs no memory safety. Read through the getters above: another module reading the
    // stored property itself would check it all the same.
    @exclusivity(unchecked) private var turns: UInt64 = 0
    @exclusivity(unchecked) private var stepStarted = MonotonicClock.nowMilliseconds()
    /// Channels with output queued during this iteration; flushed once at its end, so many
    /// answers to one peer leave in one `send`.
    private var channelsToFlush: [Channel] = []
    /// One read buffer per loop: channels read into it and hand the bytes on at once.
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    private struct RepeatingTimer {
        let id: UInt64
        let intervalMilliseconds: Int64
        var nextMilliseconds: Int64
        let action: () -> Void
    }

    /// This loop's number in the process (0, 1, 2... in creation order): picks its `PerLoop` part.
    public let number: Int
    private static let numbering = Lock()
    nonisolated(unsafe) private static var loopsCreated = 0

    public init(backend kind: EventBackendKind = .processDefault) throws(SystemError) {
        number = Self.numbering.withLock {
            defer { Self.loopsCreated += 1 }
            return Self.loopsCreated
        }
        backendKind = kind
        backend = try kind.make()
        wakeup = try WakeupSignal()
        // Every stored property is set by now, so a throw runs deinit, which closes the wake-up.
        try backend.add(wakeup.fd, readable: true, writable: false, token: Self.wakeToken)
    }

    deinit {
        wakeup.close()
        readBuffer.deallocate()
    }

    /// True on the thread running `run()`. Safe from any thread, and cheap (a thread-local read):
    /// every answer asks it to decide whether to hop threads.
    public var isInLoopThread: Bool { pthread_getspecific(Self.currentLoopKey) == Unmanaged.passUnretained(self).toOpaque() }

    /// The loop whose `run()` is on the calling thread's stack; nil on other threads (workers).
    public static var current: EventLoop? {
        guard let pointer = pthread_getspecific(currentLoopKey) else { return nil }
        return Unmanaged<EventLoop>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// The number of the loop whose `run()` is on the calling thread, read without retaining the
    /// loop (`PerLoop` asks on every request); nil on other threads.
    public static var currentNumber: Int? {
        guard let pointer = pthread_getspecific(currentLoopKey) else { return nil }
        return Unmanaged<EventLoop>.fromOpaque(pointer)._withUnsafeGuaranteedRef { $0.number }
    }

    /// Now as the calling thread's loop has it (its `stepMilliseconds`, read without retaining
    /// the loop); the clock itself on other threads.
    public static var nowForCurrentStep: Int64 {
        guard let pointer = pthread_getspecific(currentLoopKey) else { return MonotonicClock.nowMilliseconds() }
        return Unmanaged<EventLoop>.fromOpaque(pointer)._withUnsafeGuaranteedRef { $0.stepStarted }
    }

    /// The thread-local slot behind `current` (unretained: `run()` clears it before it returns).
    private static let currentLoopKey: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        return key
    }()

    /// Debug builds stop at loop-confined state touched from another thread once the loop
    /// runs (registrations, flushes): the comments that say "loop thread only", checked.
    @inline(__always)
    public func assertOnLoop(_ what: StaticString = #function) {
        #if DEBUG
        precondition(!running.load(ordering: .relaxed) || isInLoopThread, "\(what) called off its event loop's thread")
        #endif
    }

    // MARK: Registration (loop thread)

    public func register(_ fd: Int32, readable: Bool, writable: Bool, handler: EventHandler) throws(SystemError) {
        assertOnLoop()
        precondition(handlers[fd] == nil, "fd \(fd) registered twice")
        let token = nextToken
        nextToken += 1
        try backend.add(fd, readable: readable, writable: writable, token: token)
        handlers[fd] = (token, handler)
        fdsByToken[token] = fd
    }

    public func reregister(_ fd: Int32, readable: Bool, writable: Bool) {
        assertOnLoop()
        guard let registration = handlers[fd] else { return }
        backend.modify(fd, readable: readable, writable: writable, token: registration.token)
    }

    public func unregister(_ fd: Int32) {
        assertOnLoop()
        guard let registration = handlers.removeValue(forKey: fd) else { return }
        fdsByToken.removeValue(forKey: registration.token)
        backend.remove(fd)
    }

    /// Runs `action` on the loop thread every `intervalMilliseconds`, first after one interval,
    /// until the returned timer is cancelled or the loop stops. Safe from any thread.
    @discardableResult
    public func scheduleRepeating(everyMilliseconds intervalMilliseconds: Int64, _ action: @escaping () -> Void) -> RepeatingTimerHandle {
        precondition(intervalMilliseconds > 0)
        let onLoop = isInLoopThread
        let id = taskLock.withLock {
            nextTimerID += 1
            if !onLoop { timersOnTheirWay.insert(nextTimerID) }
            return nextTimerID
        }
        let timer = RepeatingTimer(
            id: id, intervalMilliseconds: intervalMilliseconds,
            nextMilliseconds: MonotonicClock.nowMilliseconds() + intervalMilliseconds, action: action)
        if onLoop {
            add(timer)
        } else {
            nonisolatedExecute {
                guard self.taskLock.withLock({ self.timersOnTheirWay.remove(id) }) != nil else { return }
                self.add(timer)
            }
        }
        return RepeatingTimerHandle(loop: self, id: id)
    }

    /// Keeps `timers` in id order (ids from other threads may arrive out of order), which
    /// `runDueTimers` relies on.
    private func add(_ timer: RepeatingTimer) {
        timers.insert(timer, at: timers.firstIndex { $0.id > timer.id } ?? timers.count)
    }

    /// Takes a timer off the loop, and with it its action and what the action holds. A timer
    /// scheduled from another thread and not on the loop yet is stopped from joining it, so it
    /// never runs, even when its task to join runs later in the same turn as this cancel.
    fileprivate func cancelTimer(_ id: UInt64) {
        if taskLock.withLock({ timersOnTheirWay.remove(id) }) != nil { return }
        if isInLoopThread {
            timers.removeAll { $0.id == id }
        } else {
            nonisolatedExecute { self.timers.removeAll { $0.id == id } }
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
        if needsWake { wakeup.signal() }
    }

    /// Asks `run()` to return after the current iteration. Safe from any thread.
    public func stop() {
        nonisolatedExecute { self.stopRequested = true }
    }

    // MARK: Running

    /// Runs the loop on the calling thread until `stop()`.
    public func run() {
        precondition(EventLoop.current == nil, "an event loop is already running on this thread")
        pthread_setspecific(Self.currentLoopKey, Unmanaged.passUnretained(self).toOpaque())
        running.store(true, ordering: .relaxed)
        defer {
            running.store(false, ordering: .relaxed)
            pthread_setspecific(Self.currentLoopKey, nil)
        }
        var ready = [ReadyEvent](repeating: ReadyEvent(token: 0, readable: false, writable: false, hangup: false), count: 256)
        while !stopRequested {
            turns &+= 1
            let count = backend.wait(timeoutMilliseconds: Int32(millisecondsUntilNextTimer()), into: &ready)
            stepStarted = MonotonicClock.nowMilliseconds()
            if count < 0 {
                if errno == EINTR { continue }
                fatalError("\(backendKind.rawValue) wait failed: errno \(errno)")
            }
            for event in ready.prefix(count) {
                if event.token == Self.wakeToken {
                    wakeup.drain()
                    continue
                }
                // A handler may close its fd, and an accept may reuse the number, within this turn.
                guard let fd = fdsByToken[event.token], let registration = handlers[fd], registration.token == event.token else { continue }
                registration.handler.handle(Readiness(readable: event.readable, writable: event.writable, hangup: event.hangup))
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
        assertOnLoop()
        channelsToFlush.append(channel)
    }

    private func flushChannels() {
        // Bounded: flushing cannot schedule more flushes (a channel flushes all it has).
        let pending = channelsToFlush
        channelsToFlush.removeAll(keepingCapacity: true)
        for channel in pending { channel.flushScheduled() }
    }

    private func runTasks() {
        stepStarted = MonotonicClock.nowMilliseconds()
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
        stepStarted = now
        // Timers are kept in id order, so after an action, which may cancel its own timer or
        // others, the walk goes on after its id.
        var index = 0
        while index < timers.count {
            guard timers[index].nextMilliseconds <= now else {
                index += 1
                continue
            }
            let id = timers[index].id
            timers[index].nextMilliseconds = now + timers[index].intervalMilliseconds
            timers[index].action()
            index = timers.firstIndex { $0.id > id } ?? timers.count
        }
    }
}

/// A repeating timer on its loop. Safe from any thread; cancelling twice, or after the loop
/// stopped, does nothing.
public struct RepeatingTimerHandle: Sendable {
    fileprivate let loop: EventLoop
    fileprivate let id: UInt64

    public func cancel() { loop.cancelTimer(id) }
}
