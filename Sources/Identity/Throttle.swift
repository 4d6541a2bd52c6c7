import FoundationEssentials
import Platform

/// A budget of wrong passwords, kept per normalised username for clients without a device
/// token (whether or not the name exists, so a lock reveals nothing) and per device token for
/// clients with one. The first `freeFailures` cost nothing; each further one locks for
/// `baseDelay * 2^(extra failures)`, capped at `maximumDelay`. Failures decay: one is forgiven
/// per `decaySeconds` without a failure, and `decaySeconds <= maximumDelay / 2`, so a failure
/// right after the longest lock starts a shorter one (a guesser settles at a steady pace instead
/// of holding the lock at its maximum). `maximumConsecutiveFailures` counts failures since the
/// last success, without decay (NIST SP 800-63B 5.2.2: at most 100); reaching it stops this
/// budget until a success. Rows idle `failureWindowSeconds` are dropped unless at that limit.
public struct AccountThrottlePolicy: Sendable, Equatable {
    public var freeFailures: Int
    public var baseDelaySeconds: Int64
    public var maximumDelaySeconds: Int64
    public var decaySeconds: Int64
    public var maximumConsecutiveFailures: Int
    public var failureWindowSeconds: Int64

    public init(
        freeFailures: Int = 5, baseDelaySeconds: Int64 = 30, maximumDelaySeconds: Int64 = 900, decaySeconds: Int64 = 300,
        maximumConsecutiveFailures: Int = 100, failureWindowSeconds: Int64 = 86_400
    ) {
        precondition(freeFailures >= 1 && baseDelaySeconds >= 1 && maximumDelaySeconds >= baseDelaySeconds)
        precondition(decaySeconds >= 1 && decaySeconds * 2 <= maximumDelaySeconds, "decay must forgive two failures per longest lock")
        precondition(maximumConsecutiveFailures >= freeFailures && failureWindowSeconds >= maximumDelaySeconds)
        self.freeFailures = freeFailures
        self.baseDelaySeconds = baseDelaySeconds
        self.maximumDelaySeconds = maximumDelaySeconds
        self.decaySeconds = decaySeconds
        self.maximumConsecutiveFailures = maximumConsecutiveFailures
        self.failureWindowSeconds = failureWindowSeconds
    }

    /// The budget of a device token: small, and the token is revoked when it runs out.
    public static let deviceTokenDefault = AccountThrottlePolicy(freeFailures: 3, maximumConsecutiveFailures: 10)

    /// The lock after the `failures`-th failure (nil: no lock yet), in seconds.
    public func delay(afterFailures failures: Int) -> Int64? {
        guard failures >= freeFailures else { return nil }
        let doublings = min(failures - freeFailures, 30)
        let delay = baseDelaySeconds.multipliedReportingOverflow(by: Int64(1) << doublings)
        return delay.overflow ? maximumDelaySeconds : min(delay.partialValue, maximumDelaySeconds)
    }

    /// The fewest failures that lock for `maximumDelay`: counts stop there, so decay always bites.
    var failuresAtMaximum: Int {
        var failures = freeFailures
        while let delay = delay(afterFailures: failures), delay < maximumDelaySeconds { failures += 1 }
        return failures
    }

    /// The failure count left of `stored` after decay since `lastFailureAt`.
    public func decayed(stored: Int, lastFailureAt: Int64, now: Int64) -> Int {
        let forgiven = max(0, now - lastFailureAt) / decaySeconds
        return max(0, stored - Int(min(forgiven, Int64(stored))))
    }

    /// Counts one attempt before its password is checked, so parallel attempts never check
    /// more passwords than the budget allows. The attempt is counted as a failure until it
    /// succeeds (a crash mid-check leaves it counted: the safe side).
    public func reserve(_ current: FailureCount?, now: Int64) -> AttemptDecision {
        let current = current ?? FailureCount(failures: 0, consecutive: 0, lastFailureAt: now, lockedUntil: 0)
        guard current.consecutive < maximumConsecutiveFailures else { return .exhausted }
        guard current.lockedUntil <= now else { return .locked(retryAfterSeconds: current.lockedUntil - now) }
        let failures = min(decayed(stored: current.failures, lastFailureAt: current.lastFailureAt, now: now) + 1, failuresAtMaximum)
        let lockedUntil = delay(afterFailures: failures).map { now + $0 } ?? 0
        return .reserved(FailureCount(failures: failures, consecutive: current.consecutive + 1, lastFailureAt: now, lockedUntil: lockedUntil))
    }
}

/// A budget's stored state.
public struct FailureCount: Sendable, Equatable {
    /// Decaying count that sets the lock.
    public var failures: Int
    /// Failures since the last success, never decaying.
    public var consecutive: Int
    public var lastFailureAt: Int64
    public var lockedUntil: Int64
}

public enum AttemptDecision: Sendable, Equatable {
    /// Go ahead and check the password; the new state already counts this attempt.
    case reserved(FailureCount)
    /// Locked for this long; no password is checked.
    case locked(retryAfterSeconds: Int64)
    /// `maximumConsecutiveFailures` reached: no password is checked until a success elsewhere.
    case exhausted
}

/// A token bucket's arithmetic, shared by the in-memory and the stored budgets: `burst`
/// attempts at once, refilled at `refillPerSecond`. Pure: the caller keeps the state.
public struct TokenBucket: Sendable, Equatable {
    public struct State: Sendable, Equatable {
        public var tokens: Double
        public var updatedAt: Double
    }

    public let burst: Double
    public let refillPerSecond: Double

    public init(burst: Int, refillPerMinute: Int) {
        precondition(burst >= 1 && refillPerMinute >= 1)
        self.burst = Double(burst)
        self.refillPerSecond = Double(refillPerMinute) / 60
    }

    /// After this long without a reservation a bucket is full again: its state can be forgotten.
    public var secondsToFill: Double { burst / refillPerSecond }

    func refilled(_ state: State?, now: Double) -> Double {
        guard let state else { return burst }
        return min(burst, state.tokens + max(0, now - state.updatedAt) * refillPerSecond)
    }

    /// Spends one token: the new state, or the whole seconds to wait (nothing spent).
    func reserve(_ state: State?, now: Double) -> Result<State, Wait> {
        let tokens = refilled(state, now: now)
        guard tokens >= 1 else { return .failure(Wait(seconds: Int64(((1 - tokens) / refillPerSecond).rounded(.up)))) }
        return .success(State(tokens: tokens - 1, updatedAt: now))
    }

    /// Gives one token back (at most up to `burst`).
    func refund(_ state: State, now: Double) -> State {
        State(tokens: min(burst, refilled(state, now: now) + 1), updatedAt: now)
    }

    struct Wait: Error, Equatable {
        let seconds: Int64
    }
}

/// A per-client-address budget: `reserve` spends a token for an attempt about to run, in one
/// step (nil when spent, otherwise the seconds to wait, nothing spent; parallel callers never
/// overdraw), `refund` gives it back (the attempt succeeded, or was refused before any work).
public protocol ClientBudget: Sendable {
    func reserve(address: String, now: Double) throws -> Int64?
    func refund(address: String, now: Double) throws
}

/// A token bucket per client address, in memory, per process (a restart forgives): what one
/// SQLite process uses. Bounded memory: at most `maximumAddresses` buckets; full buckets are
/// dropped first, then the oldest.
public final class ClientLoginBudget: ClientBudget, @unchecked Sendable {
    public let bucket: TokenBucket
    public let maximumAddresses: Int
    private var buckets: [String: TokenBucket.State] = [:]
    private let lock = Lock()

    public init(burst: Int = 20, refillPerMinute: Int = 10, maximumAddresses: Int = 100_000) {
        precondition(maximumAddresses >= 1)
        bucket = TokenBucket(burst: burst, refillPerMinute: refillPerMinute)
        self.maximumAddresses = maximumAddresses
    }

    public func reserve(address: String, now: Double) -> Int64? {
        lock.lock()
        defer { lock.unlock() }
        switch bucket.reserve(buckets[address], now: now) {
        case .failure(let wait): return wait.seconds
        case .success(let state):
            buckets[address] = state
            if buckets.count > maximumAddresses { evict(now: now) }
            return nil
        }
    }

    public func refund(address: String, now: Double) {
        lock.lock()
        defer { lock.unlock() }
        guard let state = buckets[address] else { return }
        buckets[address] = bucket.refund(state, now: now)
    }

    public var trackedAddresses: Int {
        lock.lock()
        defer { lock.unlock() }
        return buckets.count
    }

    private func evict(now: Double) {
        buckets = buckets.filter { bucket.refilled($0.value, now: now) < bucket.burst }
        while buckets.count > maximumAddresses, let oldest = buckets.min(by: { $0.value.updatedAt < $1.value.updatedAt }) {
            buckets[oldest.key] = nil
        }
    }
}
