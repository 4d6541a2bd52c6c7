import Storage

/// What decides the factors a session owes on one device.
public struct FactorState: Sendable, Equatable {
    public var smsVerification: Bool
    public var deviceTrusted: Bool
    public var hasActiveKey: Bool
    /// An active authenticator app (a user-wide factor, like the SMS switch).
    public var hasTotp: Bool = false
}

extension IdentityStore {
    /// One read for the user's switch, the device's trust and its key; nil for an unknown user.
    public func factorState(userID: String, deviceID: String) throws -> FactorState? {
        try database.read { c in
            try c.queryOne(
                """
                SELECT u.sms_verification AS sms,
                    EXISTS (SELECT 1 FROM devices d WHERE d.user_id = u.user_id AND d.device_id = ? AND d.trusted_at IS NOT NULL) AS trusted,
                    EXISTS (SELECT 1 FROM device_keys k WHERE k.user_id = u.user_id AND k.device_id = ? AND k.revoked_at IS NULL) AS has_key,
                    EXISTS (SELECT 1 FROM totp_secrets t WHERE t.user_id = u.user_id AND t.activated_at IS NOT NULL) AS has_totp
                FROM users u WHERE u.user_id = ?
                """,
                [.text(deviceID), .text(deviceID), .text(userID)]
            ).map { row in
                FactorState(
                    smsVerification: try row.bool("sms"), deviceTrusted: try row.bool("trusted"), hasActiveKey: try row.bool("has_key"),
                    hasTotp: try row.bool("has_totp"))
            }
        }
    }

    /// After a password reset: every device key of the user revoked and every device untrusted,
    /// in one transaction. Returns how many keys and trusted devices there were.
    public func revokeDevices(userID: String, now: Int64, event: PendingEvent?) throws -> (keys: Int, devices: Int) {
        try database.write { c in
            let keys = try c.run("UPDATE device_keys SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL", [.integer(now), .text(userID)])
            let devices = try c.run("UPDATE devices SET trusted_at = NULL WHERE user_id = ? AND trusted_at IS NOT NULL", [.text(userID)])
            if let event { try Self.insert(event, c) }
            return (keys, devices)
        }
    }
}
