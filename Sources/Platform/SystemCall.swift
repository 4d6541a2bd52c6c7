#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// An operating-system error from a system call the program used correctly.
public struct SystemError: Error, Sendable, CustomStringConvertible {
    public let call: String
    public let errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var description: String { "\(call) failed: \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// What a non-blocking call returned: a value, or "try again when the fd is ready".
public enum IOResult<Value> {
    case done(Value)
    case wouldBlock
}

/// The one place system calls go through: retries `EINTR`, turns `EAGAIN` into `.wouldBlock`,
/// crashes on programmer errors (`EBADF`, `EFAULT`, `EINVAL` on an fd we own), throws otherwise.
@inline(__always)
public func systemCall<T: BinaryInteger>(_ name: String, _ body: () -> T) throws(SystemError) -> IOResult<T> {
    while true {
        let result = body()
        if result >= 0 { return .done(result) }
        let code = errno  // the C library's, on Linux and Darwin alike
        switch code {
        case EINTR: continue
        case EAGAIN, EWOULDBLOCK, EINPROGRESS: return .wouldBlock
        case EBADF, EFAULT: fatalError("\(name): programmer error, errno \(code)")
        default: throw SystemError(call: name, errno: code)
        }
    }
}

/// For calls that never legitimately block (setup calls): any failure throws.
@inline(__always)
@discardableResult
public func systemCallOrThrow<T: BinaryInteger>(_ name: String, _ body: () -> T) throws(SystemError) -> T {
    switch try systemCall(name, body) {
    case .done(let value): return value
    case .wouldBlock: throw SystemError(call: name, errno: EAGAIN)
    }
}

/// Milliseconds on the monotonic clock: for deadlines and durations, never for wall time.
public enum MonotonicClock {
    public static func nowMilliseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    public static func nowMicroseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1000
    }
}

/// Seconds since the Unix epoch (wall clock), for timestamps that leave the process.
public enum WallClock {
    public static func nowSeconds() -> Int64 { Int64(time(nil)) }

    public static func nowMilliseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }
}
