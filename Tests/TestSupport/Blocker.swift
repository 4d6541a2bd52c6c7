import Foundation

/// Holds the threads that enter it (workers, handlers) until the test releases them all, and
/// tells the test how many are held. A held thread gives up after 60 s, so a failing test cannot hang.
public final class Blocker: @unchecked Sendable {
    private let condition = NSCondition()
    private var released = false
    private var entered = 0

    public init() {}

    /// Called on the thread to hold: returns once `release()` was called.
    public func hold() {
        condition.lock()
        entered += 1
        condition.broadcast()
        let deadline = Date().addingTimeInterval(60)
        while !released && condition.wait(until: deadline) {}
        condition.unlock()
    }

    /// Waits (at most `timeoutSeconds`) until `count` threads have entered `hold()`; false if fewer came.
    @discardableResult
    public func waitUntilHeld(_ count: Int = 1, timeoutSeconds: Double = 30) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while entered < count { if !condition.wait(until: deadline) { break } }
        return entered >= count
    }

    /// Lets every held thread, and every later one, through.
    public func release() {
        condition.lock()
        released = true
        condition.broadcast()
        condition.unlock()
    }
}
