import Secrets

/// Which budget an `identity.login` attempt is judged on. Reserved (counted) before the
/// password is checked, then settled: a failure keeps the reservation, a success releases it.
enum LoginAttemptReservation: Equatable {
    /// A valid device token for this user and device (OWASP device cookies): its own budget
    /// only, never the failures of clients without one.
    case deviceToken(hash: [UInt8])
    /// No valid token: the client address's budget and the account's.
    case untrusted(address: String)

    /// Judged on the account's budget, which a success then clears.
    var usesAccountBudget: Bool { if case .untrusted = self { true } else { false } }
}

extension IdentityService {
    static let deviceTokenPrefix = "lkd_"

    /// Reserves the attempt or throws `locked` / `rate_limited` without checking any password.
    /// A token that is wrong, foreign, expired or used up counts as none.
    func reserveLoginAttempt(
        username: String, user: UserRecord?, deviceID: String, deviceToken: String?, caller: Caller, now: Int64
    ) throws -> LoginAttemptReservation {
        if let deviceToken, OpaqueToken.isWellFormed(deviceToken, prefix: Self.deviceTokenPrefix) {
            let hash = OpaqueToken.hash(deviceToken)
            // Looked up for unknown names too (bound to no user, it never matches): the same work.
            if let decision = try store.reserveTokenAttempt(
                hash: hash, userID: user?.userID ?? "", deviceID: deviceID, policy: settings.deviceTokenThrottle, now: now)
            {
                if let refusal = try refusal(decision, policy: settings.deviceTokenThrottle, user: user, deviceID: deviceID, caller: caller, now: now) {
                    throw refusal
                }
                return .deviceToken(hash: hash)
            }
        }
        let address = caller.client ?? "unknown"
        if let wait = try clientBudget.reserve(address: address, now: Double(now)) {
            throw IdentityError.rateLimited(retryAfterSeconds: max(1, wait))
        }
        let decision: AttemptDecision
        do {
            decision = try store.reserveAccountAttempt(username: username, policy: settings.accountThrottle, now: now)
        } catch {
            try? clientBudget.refund(address: address, now: Double(now))  // the first error is the one to report
            throw error
        }
        if let refusal = try refusal(decision, policy: settings.accountThrottle, user: user, deviceID: deviceID, caller: caller, now: now) {
            try clientBudget.refund(address: address, now: Double(now))  // refused before any work
            throw refusal
        }
        return .untrusted(address: address)
    }

    /// The `locked` answer for a refused attempt (recorded for a known user); nil when reserved.
    private func refusal(
        _ decision: AttemptDecision, policy: AccountThrottlePolicy, user: UserRecord?, deviceID: String, caller: Caller, now: Int64
    ) throws -> IdentityError? {
        let retryAfter: Int64
        switch decision {
        case .reserved: return nil
        case .locked(let seconds): retryAfter = seconds
        // Ends only with a success elsewhere or a password change; come back no sooner than the longest lock.
        case .exhausted: retryAfter = policy.maximumDelaySeconds
        }
        if let user { try store.record([event(user.userID, "login.throttled", "locked", device: deviceID, caller, now)]) }
        return IdentityError.locked(retryAfterSeconds: retryAfter)
    }

    /// A wrong password: the reservation stays counted as the failure.
    func settleFailedLogin(_ reservation: LoginAttemptReservation, username: String, user: UserRecord?, deviceID: String, caller: Caller, now: Int64) throws {
        let failed = user.map { event($0.userID, "login.failed", "invalid_credentials", device: deviceID, caller, now) }
        switch reservation {
        case .deviceToken(let hash): try store.settleTokenFailure(hash: hash, now: now, event: failed)
        case .untrusted: try store.settleAccountFailure(username: username, now: now, event: failed)
        }
    }

    /// A right password: the address's token goes back, and the device gets a fresh device
    /// token (returned: the client keeps it for its next login). A login that presented a valid
    /// token rotates that one token, which keeps its trust; any other login adds an untrusted
    /// token beside the device's others, so a stranger's login never voids the owner's.
    func settleSuccessfulLogin(_ reservation: LoginAttemptReservation, username: String, user: UserRecord, deviceID: String, now: Int64) throws -> String {
        // A refund that fails costs the address one token, never the login.
        var replacing: [UInt8]?
        switch reservation {
        case .untrusted(let address): try? clientBudget.refund(address: address, now: Double(now))
        case .deviceToken(let hash): replacing = hash
        }
        let token = OpaqueToken.make(prefix: Self.deviceTokenPrefix)
        try store.issueDeviceToken(
            hash: OpaqueToken.hash(token), userID: user.userID, deviceID: deviceID, now: now,
            expiresAt: now + settings.deviceTokenLifetimeSeconds, maximumPerUser: settings.maxDeviceTokensPerUser,
            replacing: replacing, endStreakOf: reservation.usesAccountBudget ? nil : username)
        return token
    }
}
