import FoundationEssentials
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// A mutual-exclusion lock over a POSIX mutex: the server's modules build on
/// FoundationEssentials, which has no `NSLock`, so that the binary never links Foundation's ICU.
public final class Lock: @unchecked Sendable {
    fileprivate let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    public init() {
        let result = pthread_mutex_init(mutex, nil)
        precondition(result == 0, "pthread_mutex_init failed: errno \(result)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func lock() {
        let result = pthread_mutex_lock(mutex)
        precondition(result == 0, "pthread_mutex_lock failed: errno \(result)")
    }

    public func unlock() {
        let result = pthread_mutex_unlock(mutex)
        precondition(result == 0, "pthread_mutex_unlock failed: errno \(result)")
    }

    public func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A lock with a condition variable, as `NSCondition` has them: `wait` releases the lock while
/// it sleeps and holds it again when it returns. The time left to a deadline is slept on the
/// monotonic clock, so a change of the wall clock during the wait neither cuts it short nor stretches it.
public final class Condition: @unchecked Sendable {
    private let mutex = Lock()
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        defer { pthread_condattr_destroy(&attributes) }
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        let result = pthread_cond_init(condition, &attributes)
        precondition(result == 0, "pthread_cond_init failed: errno \(result)")
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
    }

    public func lock() { mutex.lock() }
    public func unlock() { mutex.unlock() }

    public func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        try mutex.withLock(body)
    }

    /// Sleeps until signalled (or woken spuriously: callers wait in a loop on their predicate).
    public func wait() {
        pthread_cond_wait(condition, mutex.mutex)
    }

    /// Sleeps until signalled or until `deadline`; false when the time ran out.
    @discardableResult
    public func wait(until deadline: Date) -> Bool {
        let seconds = deadline.timeIntervalSinceNow
        guard seconds > 0 else { return false }
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanoseconds = Int(seconds * 1_000_000_000) + deadline.tv_nsec
        deadline.tv_sec += nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        return pthread_cond_timedwait(condition, mutex.mutex, &deadline) != ETIMEDOUT
    }

    public func signal() { pthread_cond_signal(condition) }
    public func broadcast() { pthread_cond_broadcast(condition) }
}
