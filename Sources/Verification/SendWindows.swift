/// One send under a limit key: its number (1, 2, 3, ... per key) and time, Unix milliseconds.
public struct SendMark: Sendable, Equatable {
    public var sequence: Int64
    public var at: Int64

    public init(sequence: Int64, at: Int64) {
        self.sequence = sequence
        self.at = at
    }

    /// The send after `latest`. Its time never goes below the one before it (a clock stepped
    /// back, or another replica's clock), so numbers and times sort the same way.
    static func following(_ latest: SendMark?, at: Int64) -> SendMark {
        guard let latest else { return SendMark(sequence: 1, at: at) }
        return SendMark(sequence: latest.sequence + 1, at: max(at, latest.at))
    }
}

/// Sliding-window send limits at a cost that does not grow with traffic. "At least `count`
/// sends after `since`" holds exactly when send number `newest - count + 1` is after `since`
/// (numbers and times sort alike), so each limit is two primary-key lookups where a COUNT(*)
/// read every send of the window. The answer, retry_after included, is the COUNT(*)'s: the
/// window frees up when that same send leaves it.
///
/// Made inside the transaction of one send: each key's newest send is read once, and serves
/// both to judge its limits and to number the send after it. The keys are distinct.
struct SendWindows {
    private let keys: [(String, [SendLimit], String)]
    private let newest: [SendMark?]

    init(_ tx: VerificationTransaction, keys: [(String, [SendLimit], String)]) throws {
        self.keys = keys
        newest = try keys.map { key, _, _ in try tx.latestSend(key: key) }
    }

    /// The limit that one more send would break, with the seconds until it would not; nil when
    /// every limit has room.
    func firstExceededLimit(_ tx: VerificationTransaction, nowMilliseconds now: Int64) throws -> VerificationError? {
        var worst: (retryAfterSeconds: Int64, scope: String)?
        for ((key, limits, scope), latest) in zip(keys, newest) {
            guard let latest else { continue }
            for limit in limits {
                let windowMilliseconds = limit.windowSeconds * 1000
                guard let oldestCounted = try Self.oldestSendFilling(limit, latest: latest, tx, key: key),
                    oldestCounted > now - windowMilliseconds
                else { continue }
                let retryAfter = max(1, (oldestCounted + windowMilliseconds - now + 999) / 1000)
                if worst == nil || retryAfter > worst!.retryAfterSeconds { worst = (retryAfter, scope) }
            }
        }
        return worst.map { .rateLimited(retryAfterSeconds: $0.retryAfterSeconds, scope: $0.scope) }
    }

    /// Records the send under every key, each numbered after the newest send read for it.
    func record(_ tx: VerificationTransaction, at: Int64) throws {
        for ((key, _, _), latest) in zip(keys, newest) { try tx.recordSend(key: key, after: latest, at: at) }
    }

    /// The time of the `limit.count`-th newest send: the window is full while it is inside.
    private static func oldestSendFilling(_ limit: SendLimit, latest: SendMark, _ tx: VerificationTransaction, key: String) throws -> Int64? {
        precondition(limit.count > 0)
        let sequence = latest.sequence - Int64(limit.count) + 1
        guard sequence >= 1 else { return nil }
        return sequence == latest.sequence ? latest.at : try tx.sendTime(key: key, sequence: sequence)
    }
}
