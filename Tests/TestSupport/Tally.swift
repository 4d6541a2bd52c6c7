import Foundation

/// Counts outcomes by name from any thread (`ok`, `rate_limited`, ...), for bursts.
public final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var tally: [String: Int] = [:]

    public init() {}

    public func record(_ outcome: String) {
        lock.lock()
        tally[outcome, default: 0] += 1
        lock.unlock()
    }

    public var counts: [String: Int] {
        lock.lock()
        defer { lock.unlock() }
        return tally
    }

    public func count(_ outcome: String) -> Int { counts[outcome] ?? 0 }

    public var total: Int { counts.values.reduce(0, +) }
}
