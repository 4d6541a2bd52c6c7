import Storage

/// The factors identity checks itself (authenticator apps and recovery codes), and the one
/// budget of wrong codes they share per user (tables: migration 5 in `IdentityMigrations`).
extension IdentityStore {
    /// Checks one code against the user's budget, in one write transaction: the budget is read
    /// and the attempt counted before `check` looks at the code, and the outcome is written with
    /// it (a burst of guesses is serialised by the single writer: none sees a stale count).
    /// `check` answers the passed value, or nil for a wrong code; it may throw (nothing is then
    /// written, the attempt included). A pass clears the budget; `events` are written either way.
    func checkSecondFactor<Value>(
        userID: String, policy: AccountThrottlePolicy, now: Int64, events: (Value?) -> [PendingEvent], check: (Connection) throws -> Value?
    ) throws -> SecondFactorOutcome<Value> {
        try database.write { c in
            let row = try c.queryOne(
                "SELECT failures, consecutive, last_failure_at, locked_until FROM factor_throttle WHERE user_id = ?", [.text(userID)])
            let current = try row.map { row in
                FailureCount(
                    failures: Int(try row.int("failures")), consecutive: Int(try row.int("consecutive")),
                    lastFailureAt: try row.int("last_failure_at"), lockedUntil: try row.int("locked_until"))
            }
            let count: FailureCount
            switch policy.reserve(current, now: now) {
            case .exhausted: return .locked(retryAfterSeconds: policy.maximumDelaySeconds)
            case .locked(let seconds): return .locked(retryAfterSeconds: seconds)
            case .reserved(let reserved): count = reserved
            }
            let value = try check(c)
            for event in events(value) { try Self.insert(event, c) }
            guard let value else {
                _ = try c.run(
                    """
                    INSERT INTO factor_throttle (user_id, failures, consecutive, last_failure_at, locked_until) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (user_id) DO UPDATE SET failures = excluded.failures, consecutive = excluded.consecutive,
                        last_failure_at = excluded.last_failure_at, locked_until = excluded.locked_until
                    """,
                    [.text(userID), SQLValue(count.failures), SQLValue(count.consecutive), .integer(count.lastFailureAt), .integer(count.lockedUntil)])
                return .wrong(attemptsLeft: max(0, policy.freeFailures - count.failures))
            }
            _ = try c.run("DELETE FROM factor_throttle WHERE user_id = ?", [.text(userID)])
            return .passed(value)
        }
    }
}

extension IdentityStore {
    /// Forgets the user's wrong codes: any second factor passed, or a new password. Without it a
    /// password thief could spend the budget to its consecutive limit and lock the owner's
    /// authenticator app and recovery codes for good.
    static func clearFactorThrottle(userID: String, _ c: Connection) throws {
        _ = try c.run("DELETE FROM factor_throttle WHERE user_id = ?", [.text(userID)])
    }

    /// The second factors the user has, in one read: `sms` (every user has a phone; the first
    /// code also proves it), `totp` when an authenticator app is active, `device_key` when a
    /// `biometry` key is active on any device, `passkey` when one is usable; and how many recovery codes are unused.
    func ownedFactors(userID: String) throws -> (factors: [String], recoveryCodesLeft: Int) {
        try database.read { c in
            guard let row = try c.queryOne(
                """
                SELECT EXISTS (SELECT 1 FROM totp_secrets WHERE user_id = ? AND activated_at IS NOT NULL) AS totp,
                    EXISTS (SELECT 1 FROM device_keys WHERE user_id = ? AND revoked_at IS NULL AND protection = 'biometry') AS device_key,
                    EXISTS (SELECT 1 FROM passkeys WHERE user_id = ? AND flagged_at IS NULL) AS passkey,
                    (SELECT COUNT(*) FROM recovery_codes WHERE user_id = ? AND used_at IS NULL) AS recovery_left
                """,
                [.text(userID), .text(userID), .text(userID), .text(userID)])
            else { return ([], 0) }
            var factors = ["sms"]
            if try row.bool("totp") { factors.append("totp") }
            if try row.bool("device_key") { factors.append("device_key") }
            if try row.bool("passkey") { factors.append("passkey") }
            return (factors, Int(try row.int("recovery_left")))
        }
    }
}

/// What one checked code decided.
enum SecondFactorOutcome<Value> {
    case passed(Value)
    /// Wrong (or replayed): counted. `attemptsLeft` more may fail before the budget locks.
    case wrong(attemptsLeft: Int)
    /// The budget is locked: the code was not looked at.
    case locked(retryAfterSeconds: Int64)
}
