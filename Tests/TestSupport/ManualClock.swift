import Foundation

/// A clock the test moves by hand, for logic that reads the time through an injected clock.
public final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var milliseconds: Int64

    /// Starts in 2027, far from zero and from any real clock.
    public init(milliseconds start: Int64 = 1_800_000_000_000) { milliseconds = start }

    public func nowMilliseconds() -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        return milliseconds
    }

    public var nowSeconds: Int64 { nowMilliseconds() / 1000 }

    public func advance(seconds: Int64) { advance(milliseconds: seconds * 1000) }

    public func advance(milliseconds delta: Int64) {
        precondition(delta >= 0, "the manual clock only moves forward")
        lock.lock()
        milliseconds += delta
        lock.unlock()
    }
}
