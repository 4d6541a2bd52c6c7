#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// Sleeping the calling thread, behind Platform like every other system call: for back-off
/// between retries and for tools' polling. Never on an event loop thread.
public enum Pause {
    /// Sleeps about `microseconds` (nothing for 0 or less), going on after a signal interrupts it.
    public static func microseconds(_ microseconds: Int64) {
        guard microseconds > 0 else { return }
        var request = timespec(tv_sec: Int(microseconds / 1_000_000), tv_nsec: Int(microseconds % 1_000_000) * 1000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
    }

    public static func milliseconds(_ milliseconds: Int64) { microseconds(milliseconds * 1000) }
}
