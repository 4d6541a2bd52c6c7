import Storage

/// What decides the factors a session owes on one device.
public struct FactorState: Sendable, Equatable {
    public var smsVerification: Bool
    /// The session's device token paid a factor once (and has not expired or been voided).
    public var deviceTrusted: Bool
    /// The device has an active `biometry` key: the only kind of key that pays a second factor.
    public var hasBiometryKey: Bool
    /// That key was enrolled with an App Attest key vouching for it.
    public var biometryKeyAttested: Bool = false
    /// An active authenticator app (a user-wide factor, like the SMS switch).
    public var hasTotp: Bool = false
    /// A passkey that is not flagged (user-wide: passkeys sync between the user's devices).
    public var hasPasskey: Bool = false
}

/// What a password reset took away from a user, for the reset's mail.
public struct ResetCleanup: Sendable, Equatable {
    public var keys = 0
    public var deviceTokens = 0
    /// Second factors set up within the reset's look-back window and removed with it
    /// (`totp`, `recovery_codes`).
    public var recentFactors: [String] = []
}

extension IdentityStore {
    /// One read for the user's switch, the trust of the session's device token and the device's
    /// key; nil for an unknown user. A session without a device token is on an untrusted device.
    public func factorState(userID: String, deviceID: String, deviceTokenHash: [UInt8]?, now: Int64) throws -> FactorState? {
        try database.read { c in
            try c.queryOne(
                """
                SELECT u.sms_verification AS sms,
                    EXISTS (SELECT 1 FROM device_tokens t WHERE t.token_hash = ? AND t.user_id = u.user_id AND t.device_id = ?
                        AND t.trusted_at IS NOT NULL AND t.expires_at > ?) AS trusted,
                    EXISTS (SELECT 1 FROM device_keys k WHERE k.user_id = u.user_id AND k.device_id = ? AND k.revoked_at IS NULL
                        AND k.protection = 'biometry') AS has_key,
                    EXISTS (SELECT 1 FROM device_keys k WHERE k.user_id = u.user_id AND k.device_id = ? AND k.revoked_at IS NULL
                        AND k.protection = 'biometry' AND k.attest_app_id IS NOT NULL) AS key_attested,
                    EXISTS (SELECT 1 FROM totp_secrets t WHERE t.user_id = u.user_id AND t.activated_at IS NOT NULL) AS has_totp,
                    EXISTS (SELECT 1 FROM passkeys p WHERE p.user_id = u.user_id AND p.flagged_at IS NULL) AS has_passkey
                FROM users u WHERE u.user_id = ?
                """,
                [.blob(deviceTokenHash ?? []), .text(deviceID), .integer(now), .text(deviceID), .text(deviceID), .text(userID)]
            ).map { row in
                FactorState(
                    smsVerification: try row.bool("sms"), deviceTrusted: try row.bool("trusted"), hasBiometryKey: try row.bool("has_key"),
                    biometryKeyAttested: try row.bool("key_attested"),
                    hasTotp: try row.bool("has_totp"), hasPasskey: try row.bool("has_passkey"))
            }
        }
    }

    /// After a password reset, in one transaction: every device key revoked, every device token
    /// voided (no device stays trusted, no token keeps its own login budget), and the
    /// authenticator app, passkeys and recovery codes removed when they were set up at or after
    /// `recentSince` (what an intruder may have planted just before the owner noticed).
    public func cleanUpAfterReset(userID: String, now: Int64, recentSince: Int64, events: (ResetCleanup) -> [PendingEvent]) throws -> ResetCleanup {
        try database.write { c in
            var cleanup = ResetCleanup()
            cleanup.keys = try c.run("UPDATE device_keys SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL", [.integer(now), .text(userID)])
            cleanup.deviceTokens = try c.run("DELETE FROM device_tokens WHERE user_id = ?", [.text(userID)])
            if try c.run("DELETE FROM totp_secrets WHERE user_id = ? AND COALESCE(activated_at, created_at) >= ?", [.text(userID), .integer(recentSince)]) > 0 {
                cleanup.recentFactors.append("totp")
            }
            if try c.run("DELETE FROM passkeys WHERE user_id = ? AND created_at >= ?", [.text(userID), .integer(recentSince)]) > 0 {
                cleanup.recentFactors.append("passkey")
            }
            let recentCodes = try c.queryOne(
                "SELECT COUNT(*) AS n FROM recovery_codes WHERE user_id = ? AND created_at >= ?", [.text(userID), .integer(recentSince)])?.int("n") ?? 0
            if recentCodes > 0 {
                _ = try c.run("DELETE FROM recovery_codes WHERE user_id = ?", [.text(userID)])
                cleanup.recentFactors.append("recovery_codes")
            }
            for event in events(cleanup) { try Self.insert(event, c) }
            return cleanup
        }
    }
}
