import Foundation

/// Counts events from any thread: how many runs, attempts or calls a burst caused.
public final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    public init() {}

    public func add(_ amount: Int = 1) {
        lock.lock()
        count += amount
        lock.unlock()
    }

    public var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}
