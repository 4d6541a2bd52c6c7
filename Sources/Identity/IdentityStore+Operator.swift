import Storage

extension IdentityStore {
    /// The operator's unlock, in one transaction: the username's row in `login_throttle` goes
    /// (lock, decaying count and consecutive streak), the user's device tokens keep their tokens
    /// but lose their failures, and `event` is recorded. Returns what was cleared.
    public func clearLoginFailures(username: String, userID: String, now: Int64, event: PendingEvent) throws -> ClearedThrottle {
        try database.write { c in
            let row = try c.queryOne("SELECT consecutive, locked_until FROM login_throttle WHERE username = ?", [.text(username)])
            let cleared = ClearedThrottle(
                consecutiveFailures: Int(try row?.int("consecutive") ?? 0), wasLocked: (try row?.int("locked_until") ?? 0) > now)
            _ = try c.run("DELETE FROM login_throttle WHERE username = ?", [.text(username)])
            _ = try c.run(
                "UPDATE device_tokens SET failures = 0, consecutive = 0, locked_until = 0 WHERE user_id = ?", [.text(userID)])
            try Self.insert(event, c)
            return cleared
        }
    }
}
