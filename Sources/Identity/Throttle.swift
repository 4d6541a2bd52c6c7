import Foundation

/// Per-account throttling of password guesses. The first `freeFailures` wrong passwords cost
/// nothing; each further one locks the account for `baseDelay * 2^(extra failures)`, capped at
/// `maximumDelay`. A lock always ends: an attacker can slow a victim down by at most
/// `maximumDelay` at a time, never lock them out for good, and a device-key login is never
/// throttled by it. Failures are forgotten after `failureWindow` without one, and at a success.
/// Kept per normalised username, whether or not it exists, so a lock reveals nothing.
public struct AccountThrottlePolicy: Sendable, Equatable {
    public var freeFailures: Int
    public var baseDelaySeconds: Int64
    public var maximumDelaySeconds: Int64
    public var failureWindowSeconds: Int64

    public init(freeFailures: Int = 5, baseDelaySeconds: Int64 = 30, maximumDelaySeconds: Int64 = 900, failureWindowSeconds: Int64 = 86_400) {
        precondition(freeFailures >= 1 && baseDelaySeconds >= 1 && maximumDelaySeconds >= baseDelaySeconds)
        self.freeFailures = freeFailures
        self.baseDelaySeconds = baseDelaySeconds
        self.maximumDelaySeconds = maximumDelaySeconds
        self.failureWindowSeconds = failureWindowSeconds
    }

    /// The lock after the `failures`-th consecutive failure (nil: no lock yet), in seconds.
    public func delay(afterFailures failures: Int) -> Int64? {
        guard failures >= freeFailures else { return nil }
        let doublings = min(failures - freeFailures, 30)
        let delay = baseDelaySeconds.multipliedReportingOverflow(by: Int64(1) << doublings)
        return delay.overflow ? maximumDelaySeconds : min(delay.partialValue, maximumDelaySeconds)
    }

    /// The failure count to continue from, given the stored one and when the last failure was.
    public func effectiveFailures(stored: Int, lastFailureAt: Int64, now: Int64) -> Int {
        now - lastFailureAt >= failureWindowSeconds ? 0 : stored
    }
}

/// A token bucket per client address: `burst` failed logins at once, refilled at
/// `refillPerMinute`. Bounded memory: at most `maximumAddresses` buckets; full buckets are
/// dropped first, then the oldest. In memory, per replica (a restart forgives).
public final class ClientLoginBudget: @unchecked Sendable {
    public let burst: Double
    public let refillPerSecond: Double
    public let maximumAddresses: Int
    private struct Bucket {
        var tokens: Double
        var updatedAt: Double
    }
    private var buckets: [String: Bucket] = [:]
    private let lock = NSLock()

    public init(burst: Int = 20, refillPerMinute: Int = 10, maximumAddresses: Int = 100_000) {
        precondition(burst >= 1 && refillPerMinute >= 1 && maximumAddresses >= 1)
        self.burst = Double(burst)
        self.refillPerSecond = Double(refillPerMinute) / 60
        self.maximumAddresses = maximumAddresses
    }

    /// Nil when `address` may try a login now; otherwise the seconds to wait.
    public func retryAfter(address: String, now: Double) -> Int64? {
        lock.lock()
        defer { lock.unlock() }
        let tokens = refilled(address, now: now)
        guard tokens < 1 else { return nil }
        return Int64(((1 - tokens) / refillPerSecond).rounded(.up))
    }

    /// Spends one token for a failed login.
    public func charge(address: String, now: Double) {
        lock.lock()
        defer { lock.unlock() }
        let tokens = refilled(address, now: now)
        buckets[address] = Bucket(tokens: max(0, tokens - 1), updatedAt: now)
        if buckets.count > maximumAddresses { evict(now: now) }
    }

    public var trackedAddresses: Int {
        lock.lock()
        defer { lock.unlock() }
        return buckets.count
    }

    private func refilled(_ address: String, now: Double) -> Double {
        guard let bucket = buckets[address] else { return burst }
        return min(burst, bucket.tokens + max(0, now - bucket.updatedAt) * refillPerSecond)
    }

    private func evict(now: Double) {
        buckets = buckets.filter { refilled($0.key, now: now) < burst }
        while buckets.count > maximumAddresses, let oldest = buckets.min(by: { $0.value.updatedAt < $1.value.updatedAt }) {
            buckets[oldest.key] = nil
        }
    }
}
