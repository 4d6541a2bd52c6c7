import Storage

/// A device token as stored (only its hash; the token itself is the client's secret).
public struct DeviceTokenRecord: Sendable, Equatable {
    public var userID: String
    public var deviceID: String
    public var expiresAt: Int64
    public var count: FailureCount
}

/// The login budgets: per username for clients without a device token (`login_throttle`), per
/// device token for clients with one (`device_tokens`). Each attempt is reserved in one write
/// transaction before its password is checked (the single writer makes read-decide-write atomic).
extension IdentityStore {
    private static func failureCount(_ row: Row) throws -> FailureCount {
        FailureCount(
            failures: Int(try row.int("failures")), consecutive: Int(try row.int("consecutive")),
            lastFailureAt: try row.int("last_failure_at"), lockedUntil: try row.int("locked_until"))
    }

    // MARK: Clients without a device token

    /// Reserves one password check against `username`'s budget. A reservation is stored as a
    /// failure at once; a success deletes the row (`createSession`'s `clearThrottleFor`).
    public func reserveAccountAttempt(username: String, policy: AccountThrottlePolicy, now: Int64) throws -> AttemptDecision {
        try database.write { c in
            let row = try c.queryOne(
                "SELECT failures, consecutive, last_failure_at, locked_until FROM login_throttle WHERE username = ?", [.text(username)])
            let decision = policy.reserve(try row.map(Self.failureCount), now: now)
            guard case .reserved(let count) = decision else { return decision }
            _ = try c.run(
                """
                INSERT INTO login_throttle (username, failures, consecutive, last_failure_at, locked_until) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (username) DO UPDATE SET failures = excluded.failures, consecutive = excluded.consecutive,
                    last_failure_at = excluded.last_failure_at, locked_until = excluded.locked_until
                """,
                [.text(username), SQLValue(count.failures), SQLValue(count.consecutive), .integer(count.lastFailureAt), .integer(count.lockedUntil)])
            // Forget idle rows as we go (guesses at random names cannot grow the table for good);
            // a row at the consecutive limit stays until a success or a password change.
            _ = try c.run(
                "DELETE FROM login_throttle WHERE last_failure_at < ? AND locked_until < ? AND consecutive < ?",
                [.integer(now - policy.failureWindowSeconds), .integer(now), SQLValue(policy.maximumConsecutiveFailures)])
            return decision
        }
    }

    /// A checked password was wrong: the reservation stands. The same statements run for known
    /// and unknown names (no enumeration by timing); only a known user gets the audit event.
    public func settleAccountFailure(username: String, now: Int64, event: PendingEvent?) throws {
        try database.write { c in
            _ = try c.run("UPDATE login_throttle SET last_failure_at = ? WHERE username = ? AND last_failure_at <= ?",
                          [.integer(now), .text(username), .integer(now)])
            if let event { try Self.insert(event, c) }
        }
    }

    /// Forgets `username`'s failures (a password change; a new registration of the name).
    public func clearLoginThrottle(username: String) throws {
        try database.write { c in _ = try c.run("DELETE FROM login_throttle WHERE username = ?", [.text(username)]) }
    }

    // MARK: Clients with a device token

    /// Reserves one password check against a device token's own budget. Nil when the token is
    /// not valid for this user and device (unknown, expired, another's) or has used up its
    /// consecutive failures (it is then deleted): the caller treats the client as having none.
    public func reserveTokenAttempt(
        hash: [UInt8], userID: String, deviceID: String, policy: AccountThrottlePolicy, now: Int64
    ) throws -> AttemptDecision? {
        try database.write { c in
            guard let token = try c.queryOne(
                "SELECT user_id, device_id, expires_at, failures, consecutive, last_failure_at, locked_until FROM device_tokens WHERE token_hash = ?",
                [.blob(hash)]
            ).map(Self.deviceToken), token.userID == userID, token.deviceID == deviceID, token.expiresAt > now else { return nil }
            let decision = policy.reserve(token.count, now: now)
            switch decision {
            case .reserved(let count):
                _ = try c.run(
                    "UPDATE device_tokens SET failures = ?, consecutive = ?, last_failure_at = ?, locked_until = ? WHERE token_hash = ?",
                    [SQLValue(count.failures), SQLValue(count.consecutive), .integer(count.lastFailureAt), .integer(count.lockedUntil), .blob(hash)])
            case .exhausted:
                _ = try c.run("DELETE FROM device_tokens WHERE token_hash = ?", [.blob(hash)])
                return nil
            case .locked:
                break
            }
            return decision
        }
    }

    /// A checked password was wrong on a device token: its reservation stands.
    public func settleTokenFailure(hash: [UInt8], now: Int64, event: PendingEvent?) throws {
        try database.write { c in
            _ = try c.run("UPDATE device_tokens SET last_failure_at = ? WHERE token_hash = ? AND last_failure_at <= ?",
                          [.integer(now), .blob(hash), .integer(now)])
            if let event { try Self.insert(event, c) }
        }
    }

    /// After a successful login, in one transaction: the user's expired tokens are dropped; the
    /// token the login presented (`replacing`) is swapped for the new one, which inherits its
    /// trust, while the device's other tokens stay (each is its own secret with its own budget);
    /// at most `maximumPerUser` are kept, trusted and newest first; and, when the login came with
    /// a token, the failure streak of clients without one ends (`endStreakOf`: the owner got in,
    /// so those failures are not consecutive).
    public func issueDeviceToken(
        hash: [UInt8], userID: String, deviceID: String, now: Int64, expiresAt: Int64, maximumPerUser: Int, replacing: [UInt8]?,
        endStreakOf username: String?
    ) throws {
        try database.write { c in
            _ = try c.run("DELETE FROM device_tokens WHERE user_id = ? AND expires_at <= ?", [.text(userID), .integer(now)])
            var trustedAt: Int64?
            if let replacing {
                trustedAt = try c.queryOne(
                    "SELECT trusted_at FROM device_tokens WHERE token_hash = ? AND user_id = ? AND device_id = ?",
                    [.blob(replacing), .text(userID), .text(deviceID)])?.optionalInt("trusted_at")
                _ = try c.run("DELETE FROM device_tokens WHERE token_hash = ? AND user_id = ?", [.blob(replacing), .text(userID)])
            }
            _ = try c.run(
                "INSERT INTO device_tokens (token_hash, user_id, device_id, created_at, expires_at, trusted_at) VALUES (?, ?, ?, ?, ?, ?)",
                [.blob(hash), .text(userID), .text(deviceID), .integer(now), .integer(expiresAt), SQLValue(trustedAt)])
            _ = try c.run(
                """
                DELETE FROM device_tokens WHERE user_id = ? AND token_hash NOT IN (
                    SELECT token_hash FROM device_tokens WHERE user_id = ?
                    ORDER BY token_hash = ? DESC, trusted_at IS NOT NULL DESC, created_at DESC, token_hash LIMIT ?)
                """,
                [.text(userID), .text(userID), .blob(hash), SQLValue(maximumPerUser)])
            if let username { _ = try c.run("UPDATE login_throttle SET consecutive = 0 WHERE username = ?", [.text(username)]) }
        }
    }

    private static func deviceToken(_ row: Row) throws -> DeviceTokenRecord {
        DeviceTokenRecord(
            userID: try row.string("user_id"), deviceID: try row.string("device_id"), expiresAt: try row.int("expires_at"),
            count: try failureCount(row))
    }
}
