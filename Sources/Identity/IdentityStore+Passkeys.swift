import Secrets
import Storage

/// A passkey as stored: the credential's COSE public key and what its ceremonies reported.
public struct PasskeyRecord: Sendable, Equatable {
    public var passkeyID: String
    public var userID: String
    public var credentialID: [UInt8]
    /// The COSE_Key bytes the authenticator gave, parsed again at each use.
    public var publicKey: [UInt8]
    public var signCount: UInt32
    public var aaguid: [UInt8]
    /// `none`, `self`, `basic` or `anonca`.
    public var attestation: String
    public var backupEligible: Bool
    public var backedUp: Bool
    public var transports: [String]
    public var name: String
    public var createdAt: Int64
    public var lastUsedAt: Int64?
    public var flaggedAt: Int64?
    /// The app whose App Attest key vouched for the registration, and its environment.
    public var attestedBy: (appID: String, environment: String)? {
        get { attestedAppID.map { ($0, attestedEnvironment ?? "") } }
        set { (attestedAppID, attestedEnvironment) = (newValue?.appID, newValue?.environment) }
    }
    var attestedAppID: String? = nil
    var attestedEnvironment: String? = nil
}

/// What a ceremony's challenge is for: the passkey ceremonies, and an App Attest attestation
/// of a device key about to be enrolled (the same table: single use, hashed, short lived).
public enum PasskeyPurpose: String, Sendable {
    case register, login, verify
    case appAttest = "app_attest"
}

/// A ceremony's challenge as it was before it was consumed.
public struct PasskeyChallengeRecord: Sendable, Equatable {
    public var purpose: PasskeyPurpose
    /// Nil: any user's passkey may answer (usernameless sign-in).
    public var userID: String?
    public var expiresAt: Int64
    /// This consumption used it up (false: it was used before, by a replay or a twin).
    public var consumedNow: Bool
}

/// The outcome of recording a verified assertion.
public enum PasskeyUse: Sendable, Equatable {
    case recorded
    /// Another assertion moved the counter to or past this one's first, or the passkey is
    /// flagged: a sign of a cloned authenticator.
    case counterRegressed
    /// The passkey was revoked meanwhile.
    case gone
}

extension IdentityStore {
    private static let passkeyColumns = """
        passkey_id, user_id, credential_id, public_key, sign_count, aaguid, attestation, backup_eligible, backed_up, transports, name,
        created_at, last_used_at, flagged_at, attest_app_id, attest_environment
        """

    public func insertPasskeyChallenge(hash: [UInt8], purpose: PasskeyPurpose, userID: String?, expiresAt: Int64, now: Int64) throws {
        try database.write { c in
            // A challenge is useless once expired: old ones go as new ones come.
            _ = try c.run("DELETE FROM passkey_challenges WHERE expires_at < ?", [.integer(now - 3600)])
            _ = try c.run(
                "INSERT INTO passkey_challenges (challenge_hash, purpose, user_id, expires_at) VALUES (?, ?, ?, ?)",
                [.blob(hash), .text(purpose.rawValue), SQLValue(userID), .integer(expiresAt)])
        }
    }

    /// Uses the challenge up, whatever the ceremony then decides: a failed ceremony burns it.
    /// One conditional update, so of two replicas presenting it at once only one sees `consumedNow`.
    public func consumePasskeyChallenge(hash: [UInt8], now: Int64) throws -> PasskeyChallengeRecord? {
        try database.write { c in
            guard let row = try c.queryOne(
                "SELECT purpose, user_id, expires_at FROM passkey_challenges WHERE challenge_hash = ?", [.blob(hash)])
            else { return nil }
            let consumed = try c.run(
                "UPDATE passkey_challenges SET used_at = ? WHERE challenge_hash = ? AND used_at IS NULL", [.integer(now), .blob(hash)])
            return PasskeyChallengeRecord(
                purpose: PasskeyPurpose(rawValue: try row.string("purpose")) ?? .login, userID: try row.optionalString("user_id"),
                expiresAt: try row.int("expires_at"), consumedNow: consumed > 0)
        }
    }

    /// Stores a new passkey. False when its credential id is already registered (to anyone),
    /// nothing written; refuses past `limit` passkeys per user (`keyLimit`).
    public func savePasskey(_ passkey: PasskeyRecord, limit: Int, events: [PendingEvent]) throws -> Bool {
        try database.write { c in
            let owned = try c.queryOne("SELECT COUNT(*) AS n FROM passkeys WHERE user_id = ?", [.text(passkey.userID)])?.int("n") ?? 0
            guard owned < limit else { throw IdentityError.passkeyLimit(limit) }
            let inserted = try c.run(
                """
                INSERT INTO passkeys (\(Self.passkeyColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?)
                ON CONFLICT (credential_id) DO NOTHING
                """,
                [
                    .text(passkey.passkeyID), .text(passkey.userID), .blob(passkey.credentialID), .blob(passkey.publicKey),
                    .integer(Int64(passkey.signCount)), .blob(passkey.aaguid), .text(passkey.attestation), SQLValue(passkey.backupEligible),
                    SQLValue(passkey.backedUp), .text(passkey.transports.joined(separator: ",")), .text(passkey.name),
                    .integer(passkey.createdAt), SQLValue(passkey.attestedAppID), SQLValue(passkey.attestedEnvironment),
                ])
            guard inserted > 0 else { return false }
            for event in events { try Self.insert(event, c) }
            return true
        }
    }

    public func passkey(credentialID: [UInt8]) throws -> PasskeyRecord? {
        try database.read { c in
            try c.queryOne("SELECT \(Self.passkeyColumns) FROM passkeys WHERE credential_id = ?", [.blob(credentialID)]).map(Self.passkey)
        }
    }

    public func passkeys(userID: String) throws -> [PasskeyRecord] {
        try database.read { c in
            try c.query("SELECT \(Self.passkeyColumns) FROM passkeys WHERE user_id = ? ORDER BY created_at, passkey_id", [.text(userID)])
                .map(Self.passkey)
        }
    }

    /// Records a verified assertion in one conditional update: the counter must still be below
    /// the new one (or both 0) and the passkey unflagged, which holds when two assertions of a
    /// cloned authenticator race across replicas. A regression flags the passkey.
    public func usePasskey(passkeyID: String, signCount: UInt32, backedUp: Bool, now: Int64, events: [PendingEvent]) throws -> PasskeyUse {
        try database.write { c in
            let count = Int64(signCount)
            let changed = try c.run(
                """
                UPDATE passkeys SET sign_count = ?, backed_up = ?, last_used_at = ?
                WHERE passkey_id = ? AND flagged_at IS NULL AND (sign_count < ? OR (sign_count = 0 AND ? = 0))
                """,
                [.integer(count), SQLValue(backedUp), .integer(now), .text(passkeyID), .integer(count), .integer(count)])
            if changed > 0 {
                for event in events { try Self.insert(event, c) }
                return .recorded
            }
            let flagged = try c.run("UPDATE passkeys SET flagged_at = COALESCE(flagged_at, ?) WHERE passkey_id = ?", [.integer(now), .text(passkeyID)])
            return flagged > 0 ? .counterRegressed : .gone
        }
    }

    /// Flags a passkey whose counter went backwards (the verifier saw it before any write).
    public func flagPasskey(passkeyID: String, now: Int64, event: PendingEvent) throws {
        try database.write { c in
            _ = try c.run("UPDATE passkeys SET flagged_at = COALESCE(flagged_at, ?) WHERE passkey_id = ?", [.integer(now), .text(passkeyID)])
            try Self.insert(event, c)
        }
    }

    public func revokePasskey(passkeyID: String, userID: String, event: PendingEvent) throws -> Bool {
        try database.write { c in
            let removed = try c.run("DELETE FROM passkeys WHERE passkey_id = ? AND user_id = ?", [.text(passkeyID), .text(userID)])
            if removed > 0 { try Self.insert(event, c) }
            return removed > 0
        }
    }

    /// The user's opaque WebAuthn user handle, made (64 random bytes) on first use.
    public func passkeyUserHandle(userID: String) throws -> [UInt8] {
        if let handle = try database.read({ c in try c.queryOne("SELECT passkey_handle FROM users WHERE user_id = ?", [.text(userID)])?.optionalBlob("passkey_handle") }) {
            return handle
        }
        return try database.write { c in
            _ = try c.run(
                "UPDATE users SET passkey_handle = ? WHERE user_id = ? AND passkey_handle IS NULL", [.blob(SecureRandom.bytes(64)), .text(userID)])
            guard let handle = try c.queryOne("SELECT passkey_handle FROM users WHERE user_id = ?", [.text(userID)])?.optionalBlob("passkey_handle") else {
                throw IdentityError.unauthenticated
            }
            return handle
        }
    }

    private static func passkey(_ row: Row) throws -> PasskeyRecord {
        let transports = try row.string("transports")
        return PasskeyRecord(
            passkeyID: try row.string("passkey_id"), userID: try row.string("user_id"), credentialID: try row.blob("credential_id"),
            publicKey: try row.blob("public_key"), signCount: UInt32(clamping: try row.int("sign_count")), aaguid: try row.blob("aaguid"),
            attestation: try row.string("attestation"), backupEligible: try row.bool("backup_eligible"), backedUp: try row.bool("backed_up"),
            transports: transports.isEmpty ? [] : transports.split(separator: ",").map(String.init), name: try row.string("name"),
            createdAt: try row.int("created_at"), lastUsedAt: try row.optionalInt("last_used_at"), flaggedAt: try row.optionalInt("flagged_at"),
            attestedAppID: try row.optionalString("attest_app_id"), attestedEnvironment: try row.optionalString("attest_environment"))
    }
}
