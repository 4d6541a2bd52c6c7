import Secrets
import Storage

/// A user's authenticator-app secret as stored: sealed (AES-256-GCM under identity's server
/// key, bound to the user id), never in clear.
struct TotpRecord: Sendable, Equatable {
    var sealedSecret: [UInt8]
    var parameters: TotpParameters
    var createdAt: Int64
    /// Nil until a first good code (`identity.totp_activate`); only an active secret is a factor.
    var activatedAt: Int64?
    /// The newest time step accepted: a code of this step or an older one is refused (replay).
    var lastStep: Int64
}

extension IdentityStore {
    static func totpRecord(_ c: Connection, userID: String) throws -> TotpRecord? {
        try c.queryOne(
            "SELECT sealed_secret, algorithm, digits, period, created_at, activated_at, last_step FROM totp_secrets WHERE user_id = ?",
            [.text(userID)]
        ).map { row in
            guard let algorithm = HMACAlgorithm(rawValue: try row.string("algorithm")) else {
                throw StorageError.column("totp_secrets.algorithm holds an unknown algorithm")
            }
            return TotpRecord(
                sealedSecret: try row.blob("sealed_secret"),
                parameters: TotpParameters(algorithm: algorithm, digits: Int(try row.int("digits")), periodSeconds: try row.int("period")),
                createdAt: try row.int("created_at"), activatedAt: try row.optionalInt("activated_at"), lastStep: try row.int("last_step"))
        }
    }

    func totpRecord(userID: String) throws -> TotpRecord? {
        try database.read { c in try Self.totpRecord(c, userID: userID) }
    }

    /// Stores a new, not yet active secret, replacing a pending one. False (nothing written)
    /// when the user already has an active one: it must be removed first.
    func savePendingTotp(userID: String, record: TotpRecord) throws -> Bool {
        try database.write { c in
            if let existing = try Self.totpRecord(c, userID: userID), existing.activatedAt != nil { return false }
            _ = try c.run("DELETE FROM totp_secrets WHERE user_id = ?", [.text(userID)])
            _ = try c.run(
                "INSERT INTO totp_secrets (user_id, sealed_secret, algorithm, digits, period, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                [.text(userID), .blob(record.sealedSecret), .text(record.parameters.algorithm.rawValue), SQLValue(record.parameters.digits),
                 .integer(record.parameters.periodSeconds), .integer(record.createdAt)])
            return true
        }
    }

    /// Records an accepted step (and activates the secret when `activate`), only if the step is
    /// newer than the last one: false when a concurrent check accepted this step first.
    static func acceptTotpStep(_ c: Connection, userID: String, step: Int64, activateAt: Int64?) throws -> Bool {
        let changed: Int
        if let activateAt {
            changed = try c.run(
                "UPDATE totp_secrets SET last_step = ?, activated_at = ? WHERE user_id = ? AND last_step < ? AND activated_at IS NULL",
                [.integer(step), .integer(activateAt), .text(userID), .integer(step)])
        } else {
            changed = try c.run(
                "UPDATE totp_secrets SET last_step = ? WHERE user_id = ? AND last_step < ? AND activated_at IS NOT NULL",
                [.integer(step), .text(userID), .integer(step)])
        }
        return changed == 1
    }

    /// Deletes the user's secret, active or pending. False when there was none.
    func removeTotp(userID: String, event: PendingEvent) throws -> Bool {
        try database.write { c in
            let changed = try c.run("DELETE FROM totp_secrets WHERE user_id = ?", [.text(userID)])
            if changed > 0 { try Self.insert(event, c) }
            return changed > 0
        }
    }
}
