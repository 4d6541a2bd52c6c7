import Platform
import Runtime

/// Logs a background pass's failures once per outage, not once per pass: a follower that polls
/// four times a second while identity is down writes one warning when the outage begins and
/// one line when it ends.
public final class FailureLog: @unchecked Sendable {
    private let lock = Lock()
    private var failingSince: Int64?
    private let logger: Logger
    private let what: String

    public init(_ what: String, logger: Logger) {
        self.what = what
        self.logger = logger
    }

    public func failed(_ error: String) {
        let first = lock.withLock {
            guard failingSince == nil else { return false }
            failingSince = MonotonicClock.nowMilliseconds()
            return true
        }
        if first {
            logger.warning("background pass failing; retried at every pass, logged again when it works", ["pass": .string(what), "error": .string(error)])
        }
    }

    public func succeeded() {
        let since = lock.withLock { () -> Int64? in
            defer { failingSince = nil }
            return failingSince
        }
        if let since { logger.info("background pass works again", ["pass": .string(what), "outage_ms": .int(MonotonicClock.nowMilliseconds() - since)]) }
    }
}
