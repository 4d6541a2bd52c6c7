import FoundationEssentials
import Platform

/// Retries with exponential back-off: waits `initialBackoffMilliseconds`, then twice that, ...
/// Transient failures only (network, timeouts, 408, 429, 5xx); a permanent one stops at once.
public struct RetryPolicy: Sendable {
    public var maxAttempts: Int
    public var initialBackoffMilliseconds: Int
    public var maxBackoffMilliseconds: Int

    public init(maxAttempts: Int = 3, initialBackoffMilliseconds: Int = 500, maxBackoffMilliseconds: Int = 8000) {
        precondition(maxAttempts >= 1 && initialBackoffMilliseconds >= 0)
        self.maxAttempts = maxAttempts
        self.initialBackoffMilliseconds = initialBackoffMilliseconds
        self.maxBackoffMilliseconds = maxBackoffMilliseconds
    }

    /// Runs `attempt` until it succeeds, fails permanently, or the attempts run out; the last
    /// failure says how many tries it took.
    func run(provider: String, _ attempt: () throws(DeliveryError) -> Void) throws(DeliveryError) {
        try run(attempt, isPermanent: \.permanent) { error, tries in
            DeliveryError(provider: provider, detail: "\(error.detail) (after \(tries) attempt\(tries == 1 ? "" : "s"))", permanent: error.permanent)
        }
    }

    /// Calls `attempt` until it succeeds, fails permanently, or the attempts run out, waiting
    /// between tries; then throws what `gaveUp` makes of the last failure and the number of tries.
    /// `pause` waits the given milliseconds (a test records them instead).
    func run<Failure: Error>(
        _ attempt: () throws(Failure) -> Void, isPermanent: (Failure) -> Bool, gaveUp: (Failure, _ tries: Int) -> Failure,
        pause: (Int) -> Void = { Pause.milliseconds(Int64($0)) }
    ) throws(Failure) {
        var backoff = initialBackoffMilliseconds
        var tries = 0
        while true {
            tries += 1
            do {
                try attempt()
                return
            } catch {
                if isPermanent(error) || tries >= maxAttempts { throw gaveUp(error, tries) }
            }
            if backoff > 0 { pause(min(backoff, maxBackoffMilliseconds)) }
            backoff = min(maxBackoffMilliseconds, max(1, backoff * 2))
        }
    }

    /// Whether an HTTP status is worth another try.
    static func isTransient(status: Int) -> Bool { status == 408 || status == 429 || status >= 500 }
}
