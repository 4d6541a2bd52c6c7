import FoundationEssentials
import Platform

/// Rate and burst of one method group: `rate_per_s` tokens a second, up to `burst` saved.
/// A rate of 0 means unlimited.
public struct RateLimit: Sendable, Equatable {
    public let ratePerSecond: Double
    public let burst: Double

    public init(ratePerSecond: Double, burst: Double) {
        self.ratePerSecond = ratePerSecond
        self.burst = burst
    }

    public var isUnlimited: Bool { ratePerSecond <= 0 }
}

public enum RateLimits {
    /// Per client address. Generous for reads, tight for what costs money or guesses secrets.
    public static let defaults: [String: RateLimit] = [
        PolicyTable.Group.ping: RateLimit(ratePerSecond: 0, burst: 0),
        PolicyTable.Group.observe: RateLimit(ratePerSecond: 20, burst: 40),
        PolicyTable.Group.auth: RateLimit(ratePerSecond: 10, burst: 30),
        PolicyTable.Group.codes: RateLimit(ratePerSecond: 2, burst: 10),
        PolicyTable.Group.reset: RateLimit(ratePerSecond: 2, burst: 10),
        PolicyTable.Group.standard: RateLimit(ratePerSecond: 100, burst: 200),
    ]

    /// Parses `group=rate:burst,group=rate:burst` over the defaults (`auth=5:10,default=50:100`).
    public static func parse(_ text: String, over base: [String: RateLimit] = defaults) -> [String: RateLimit]? {
        var limits = base
        for part in text.split(separator: ",") {
            let pieces = part.split(separator: "=", maxSplits: 1).map { String($0).trimmingWhitespace() }
            guard pieces.count == 2, base[pieces[0]] != nil else { return nil }
            let numbers = pieces[1].split(separator: ":").map { Double($0) }
            guard numbers.count == 2, let rate = numbers[0], let burst = numbers[1], rate >= 0, burst >= 0, rate == 0 || burst >= 1 else {
                return nil
            }
            limits[pieces[0]] = RateLimit(ratePerSecond: rate, burst: burst)
        }
        return limits
    }
}

/// Token buckets per (client address, group). Thread-safe; the table is bounded and pruned.
public final class RateLimiter: @unchecked Sendable {
    private struct Bucket {
        var tokens: Double
        var updatedMilliseconds: Int64
    }

    private struct Key: Hashable {
        let client: String
        let group: String
    }

    public let limits: [String: RateLimit]
    public let maxBuckets: Int
    private let lock = Lock()
    private var buckets: [Key: Bucket] = [:]

    public init(limits: [String: RateLimit], maxBuckets: Int = 200_000) {
        self.limits = limits
        self.maxBuckets = maxBuckets
    }

    /// Whether `group` (or, without a limit of its own, the default group) has no limit: `take`
    /// then always allows, and need not be asked.
    public func isUnlimited(group: String) -> Bool {
        (limits[group] ?? limits[PolicyTable.Group.standard])?.isUnlimited ?? true
    }

    /// Takes one token. Returns nil when allowed, or the whole seconds to wait.
    public func take(client: String, group: String, nowMilliseconds: Int64? = nil) -> Int64? {
        guard let limit = limits[group] ?? limits[PolicyTable.Group.standard], !limit.isUnlimited else { return nil }
        // Read after the unlimited groups have returned: pings never ask the clock.
        let nowMilliseconds = nowMilliseconds ?? MonotonicClock.nowMilliseconds()
        let key = Key(client: client, group: group)
        lock.lock()
        defer { lock.unlock() }
        var bucket = buckets[key] ?? Bucket(tokens: limit.burst, updatedMilliseconds: nowMilliseconds)
        let elapsedSeconds = Double(max(0, nowMilliseconds - bucket.updatedMilliseconds)) / 1000
        bucket.tokens = min(limit.burst, bucket.tokens + elapsedSeconds * limit.ratePerSecond)
        bucket.updatedMilliseconds = nowMilliseconds
        if bucket.tokens >= 1 {
            bucket.tokens -= 1
            if buckets[key] == nil && buckets.count >= maxBuckets { pruneLocked(nowMilliseconds: nowMilliseconds) }
            buckets[key] = bucket
            return nil
        }
        buckets[key] = bucket
        let waitSeconds = (1 - bucket.tokens) / limit.ratePerSecond
        return max(1, Int64(waitSeconds.rounded(.up)))
    }

    /// Forgets buckets that have refilled completely (they would start full anyway).
    public func prune(nowMilliseconds: Int64 = MonotonicClock.nowMilliseconds()) {
        lock.lock()
        pruneLocked(nowMilliseconds: nowMilliseconds)
        lock.unlock()
    }

    private func pruneLocked(nowMilliseconds: Int64) {
        buckets = buckets.filter { key, bucket in
            guard let limit = limits[key.group] ?? limits[PolicyTable.Group.standard], !limit.isUnlimited else { return false }
            let refilled = bucket.tokens + Double(nowMilliseconds - bucket.updatedMilliseconds) / 1000 * limit.ratePerSecond
            return refilled < limit.burst
        }
        if buckets.count >= maxBuckets { buckets.removeAll(keepingCapacity: true) }
    }

    public var bucketCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return buckets.count
    }
}
