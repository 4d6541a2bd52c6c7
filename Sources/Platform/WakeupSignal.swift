#if canImport(Darwin)
import Darwin
#else
import CLinux
import Glibc
#endif

/// A descriptor that another thread makes readable to wake an event loop out of its wait: an
/// eventfd on Linux, a non-blocking pipe elsewhere. Signals coalesce: one `drain` consumes any
/// number of `signal`s, so the loop wakes at most once per turn however many threads call.
public struct WakeupSignal: Sendable {
    /// What the loop watches for readability.
    public let fd: Int32
    private let writeFD: Int32

    public init() throws(SystemError) {
        #if canImport(Darwin)
        var ends: [Int32] = [-1, -1]
        try systemCallOrThrow("pipe") { pipe(&ends) }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        fd = ends[0]
        writeFD = ends[1]
        #else
        fd = try systemCallOrThrow("eventfd") { lk_eventfd() }
        writeFD = fd
        #endif
    }

    /// Safe from any thread. A full pipe already means "awake", so a failed write loses nothing.
    public func signal() {
        var one: UInt64 = 1
        _ = LibC.write(writeFD, &one, writeFD == fd ? 8 : 1)
    }

    /// On the loop thread, after `fd` was readable.
    public func drain() {
        var sink: UInt64 = 0
        #if canImport(Darwin)
        while LibC.read(fd, &sink, 8) > 0 {}
        #else
        _ = LibC.read(fd, &sink, 8)
        #endif
    }

    public func close() {
        LibC.close(fd)
        if writeFD != fd { LibC.close(writeFD) }
    }
}
