import Delivery
import LineProtocol
import Storage

/// Identity's part of a user's data export, read in one snapshot. Never a secret: no password
/// hash, token, token hash, key material beyond the public key's id, sealed secret or code hash.
extension IdentityStore {
    /// How a column reads into the export.
    private enum Column {
        case text(String), int(String), optionalText(String), optionalInt(String), bool(String)

        func value(_ row: Row) throws -> (String, JSON) {
            switch self {
            case .text(let name): (name, .string(try row.string(name)))
            case .int(let name): (name, .int(try row.int(name)))
            case .optionalText(let name): (name, try row.optionalString(name).map(JSON.string) ?? .null)
            case .optionalInt(let name): (name, try row.optionalInt(name).map(JSON.int) ?? .null)
            case .bool(let name): (name, .bool(try row.bool(name)))
            }
        }
    }

    private static func objects(_ c: Connection, _ sql: String, _ userID: String, _ columns: [Column]) throws -> [JSON] {
        try c.query(sql, [.text(userID)]).map { row in
            .object(Dictionary(uniqueKeysWithValues: try columns.map { try $0.value(row) }))
        }
    }

    /// Nil when the user does not exist. `activityLimit` bounds the activity (newest first).
    func exportPart(userID: String, activityLimit: Int) throws -> [String: JSON]? {
        try database.read { c in
            guard let user = try user(id: userID, c) else { return nil }
            let proof = try c.queryOne("SELECT phone, proven_at FROM phone_proofs WHERE user_id = ?", [.text(userID)])
            let profile: JSON = [
                "username": .string(user.username), "email": .string(user.email), "email_verified_at": user.emailVerifiedAt.map(JSON.int) ?? .null,
                "phone": .string(user.phone), "phone_proven_at": (try proof?.string("phone") == user.phone ? try proof?.optionalInt("proven_at") : nil).map(JSON.int) ?? .null,
                "phone_changed_at": user.phoneChangedAt.map(JSON.int) ?? .null, "sms_verification": .bool(user.smsVerification),
                "has_sitekey": .bool(user.sitekey != nil), "locale": .string(user.locale.rawValue), "created_at": .int(user.createdAt),
            ]
            let totp = try Self.objects(c, "SELECT algorithm, digits, period, created_at, activated_at FROM totp_secrets WHERE user_id = ?", userID, [
                .text("algorithm"), .int("digits"), .int("period"), .int("created_at"), .optionalInt("activated_at"),
            ]).first ?? .null
            let recovery = try Self.objects(c, "SELECT created_at, used_at FROM recovery_codes WHERE user_id = ? ORDER BY created_at", userID, [
                .int("created_at"), .optionalInt("used_at"),
            ])
            let keys = try Self.objects(c, """
                SELECT key_id, device_id, protection, created_at, last_used_at, revoked_at FROM device_keys WHERE user_id = ? ORDER BY created_at
                """, userID, [
                    .text("key_id"), .text("device_id"), .text("protection"), .int("created_at"), .optionalInt("last_used_at"), .optionalInt("revoked_at"),
                ])
            let passkeys = try Self.objects(c, """
                SELECT passkey_id, name, attestation, created_at, last_used_at, flagged_at FROM passkeys WHERE user_id = ? ORDER BY created_at
                """, userID, [
                    .text("passkey_id"), .text("name"), .text("attestation"), .int("created_at"), .optionalInt("last_used_at"), .optionalInt("flagged_at"),
                ])
            let factors: JSON = ["totp": totp, "recovery_codes": .array(recovery), "device_keys": .array(keys), "passkeys": .array(passkeys)]
            let sessions = try Self.objects(c, """
                SELECT session_id, device_id, aal, aal2_at, created_at, last_seen_at, expires_at, revoked_at FROM sessions
                WHERE user_id = ? ORDER BY created_at DESC
                """, userID, [
                    .text("session_id"), .text("device_id"), .int("aal"), .optionalInt("aal2_at"), .int("created_at"), .int("last_seen_at"),
                    .int("expires_at"), .optionalInt("revoked_at"),
                ])
            let devices = try Self.objects(c, """
                SELECT device_id, created_at, expires_at, trusted_at, failures FROM device_tokens WHERE user_id = ? ORDER BY created_at
                """, userID, [.text("device_id"), .int("created_at"), .int("expires_at"), .optionalInt("trusted_at"), .int("failures")])
            let links = try Self.objects(c, """
                SELECT purpose, email, created_at, expires_at, used_at FROM email_tokens WHERE user_id = ? ORDER BY created_at
                """, userID, [.text("purpose"), .text("email"), .int("created_at"), .int("expires_at"), .optionalInt("used_at")])
            let activity = try c.query("""
                SELECT event, outcome, device_id, client, at FROM audit_events WHERE user_id = ? ORDER BY event_id DESC LIMIT ?
                """, [.text(userID), SQLValue(activityLimit)]).map { row -> JSON in
                    [
                        "event": .string(try row.string("event")), "outcome": .string(try row.string("outcome")),
                        "device_id": try row.optionalString("device_id").map(JSON.string) ?? .null,
                        "client": try row.optionalString("client").map(JSON.string) ?? .null, "at": .int(try row.int("at")),
                    ]
                }
            return [
                "user_id": .string(userID), "profile": profile, "factors": factors, "sessions": .array(sessions),
                "devices": .array(devices), "email_links": .array(links), "activity": .array(activity),
            ]
        }
    }
}
