/// What `identity.operator_unlock` cleared.
public struct ClearedThrottle: Sendable, Equatable {
    /// Failures since the user's last success, on the account's budget (clients without a device token).
    public var consecutiveFailures: Int
    /// Whether a lock was in force when it was cleared.
    public var wasLocked: Bool
}

/// What the operator's tool (`latchkey unlock`, `sessions`, `revoke-session`, `keys`,
/// `revoke-key`, `activity`) may do to one user, named by `user_id`. Internal methods only: the
/// gateway never forwards them. Every change records an `operator.*` audit event in the same
/// transaction, so the user's own activity feed shows it too. Reads record nothing.
extension IdentityService {
    /// The user id of a username (normalised first). Internal: it would enumerate users outside.
    public func findByUsername(_ raw: String) throws -> UserRecord {
        guard let username = try? Normalization.username(raw), let user = try store.user(username: username) else {
            throw IdentityError.notFound("no user with this username")
        }
        return user
    }

    /// Forgives the account's wrong passwords: the lock, the decaying count and the consecutive
    /// streak (`login_throttle`), and the failure counts of the user's device tokens. The
    /// per-address budget is not the account's and stays (it forgets on its own).
    public func operatorUnlock(userID: String, caller: Caller) throws -> ClearedThrottle {
        let user = try user(id: userID)
        let now = clock.now()
        return try store.clearLoginFailures(
            username: user.username, userID: userID, now: now, event: event(userID, "operator.unlock", "ok", device: nil, caller, now))
    }

    /// The user's live sessions, newest first (never a token).
    public func operatorSessions(userID: String) throws -> [SessionRecord] {
        _ = try user(id: userID)
        let now = clock.now()
        return try store.liveSessions(userID: userID, now: now, seenSince: now - settings.sessionIdleSeconds, limit: settings.maxSessionsListed)
    }

    /// Ends one session of the user; `not_found` when it is not one of theirs or already ended.
    public func operatorRevokeSession(userID: String, sessionID: String, caller: Caller) throws {
        _ = try user(id: userID)
        let now = clock.now()
        let device = try store.session(id: sessionID)?.deviceID
        let revoked = try store.revokeSession(
            id: sessionID, userID: userID, now: now, event: event(userID, "operator.revoke_session", "ok", device: device, caller, now))
        guard revoked else { throw IdentityError.notFound("no such active session of this user") }
    }

    /// Ends every session of the user; the count may be 0 (the action is recorded all the same).
    public func operatorRevokeAllSessions(userID: String, caller: Caller) throws -> Int {
        _ = try user(id: userID)
        let now = clock.now()
        let recorded = event(userID, "operator.revoke_session", "all", device: nil, caller, now)
        let revoked = try store.revokeAllSessions(userID: userID, now: now, event: recorded)
        if revoked == 0 { try store.record([recorded]) }
        return revoked
    }

    /// The user's active device keys, oldest first (never the key material).
    public func operatorKeys(userID: String) throws -> [DeviceKeyRecord] {
        _ = try user(id: userID)
        return try store.activeKeys(userID: userID)
    }

    /// Revokes one active key of the user: its next `key_login` answers `not_found` (`key_revoked`).
    public func operatorRevokeKey(userID: String, keyID: String, caller: Caller) throws {
        _ = try user(id: userID)
        let now = clock.now()
        let device = try store.activeKeys(userID: userID).first { $0.keyID == keyID }?.deviceID
        let revoked = try store.revokeKey(
            keyID: keyID, userID: userID, now: now, event: event(userID, "operator.revoke_key", "ok", device: device, caller, now))
        guard revoked else { throw IdentityError.notFound("no such active key of this user") }
    }

    /// The user's newest audit events, at most `settings.maxActivityLimit`.
    public func operatorActivity(userID: String, limit: Int) throws -> [AuditEvent] {
        _ = try user(id: userID)
        return try store.events(userID: userID, limit: max(1, min(limit, settings.maxActivityLimit)), before: nil)
    }
}
