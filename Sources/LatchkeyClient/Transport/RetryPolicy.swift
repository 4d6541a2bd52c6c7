import Foundation

/// When the client sends a call again by itself. Only calls whose `RetryClass` is `safe` or
/// `idempotencyKey` are ever repeated; a non-idempotent call (a login, a code check, a
/// confirmation) fails at once and its error carries the server's `retry_after`.
public struct RetryPolicy: Sendable, Equatable {
    /// Tries in all, the first included (1: never retry).
    public var maxAttempts: Int
    /// A `Retry-After` longer than this is not waited for: the error goes to the caller.
    public var maxDelaySeconds: Double
    /// The wait before the first retry when the server names none (doubling each time).
    public var baseDelaySeconds: Double

    public init(maxAttempts: Int = 3, maxDelaySeconds: Double = 10, baseDelaySeconds: Double = 0.25) {
        precondition(maxAttempts >= 1, "maxAttempts counts the first try")
        (self.maxAttempts, self.maxDelaySeconds, self.baseDelaySeconds) = (maxAttempts, maxDelaySeconds, baseDelaySeconds)
    }

    public static let standard = RetryPolicy()
    public static let never = RetryPolicy(maxAttempts: 1)

    /// How long to wait before try `attempt + 1` after `error`, or nil to give up.
    func delay(after error: LatchkeyError, attempt: Int, retryClass: RetryClass) -> Double? {
        guard retryClass != .never, attempt < maxAttempts else { return nil }
        let backoff = baseDelaySeconds * Double(1 << min(attempt - 1, 16))
        let wait: Double
        switch error {
        case .rateLimited(let seconds, _): wait = Double(seconds)
        case .overloaded, .unavailable, .timeout, .network: wait = backoff
        default: return nil
        }
        return wait <= maxDelaySeconds ? wait : nil
    }
}
