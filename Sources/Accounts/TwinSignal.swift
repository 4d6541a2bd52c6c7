import FoundationEssentials
import Platform

/// Wakes twins (requests with the same idempotency key) waiting for the first one to attach its
/// code. In-process only: a twin on another replica notices on its next look (the wait is bounded).
final class TwinSignal: @unchecked Sendable {
    private let condition = Condition()
    private var generation: UInt64 = 0

    /// The current generation: read it before looking, pass it to `wait` after.
    var current: UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return generation
    }

    /// Some reservation changed (its code attached, or it was released).
    func wake() {
        condition.lock()
        generation &+= 1
        condition.broadcast()
        condition.unlock()
    }

    /// Returns once a wake comes after `seen`, or after `timeoutMilliseconds`.
    func wait(after seen: UInt64, timeoutMilliseconds: Int64) {
        let deadline = Date().addingTimeInterval(Double(timeoutMilliseconds) / 1000)
        condition.lock()
        while generation == seen, condition.wait(until: deadline) {}
        condition.unlock()
    }
}
