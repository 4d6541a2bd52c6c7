import Delivery
import Storage

/// A user as stored (the password hash never leaves the service).
public struct UserRecord: Sendable, Equatable {
    public var userID: String
    public var username: String
    public var email: String
    public var phone: String
    public var passwordHash: String
    public var smsVerification: Bool
    public var sitekey: [UInt8]?
    public var createdAt: Int64
    /// When the owner proved the address by a link mailed to it (nil: not yet).
    public var emailVerifiedAt: Int64? = nil
    /// When the owner last changed the phone number (nil: the one registered).
    public var phoneChangedAt: Int64? = nil
    /// The language of the account's mails.
    public var locale = MailLocale.english
}

public struct SessionRecord: Sendable, Equatable {
    public var sessionID: String
    public var userID: String
    public var deviceID: String
    public var aal: Int
    public var aal2At: Int64?
    public var createdAt: Int64
    public var lastSeenAt: Int64
    public var expiresAt: Int64
    public var revokedAt: Int64?
    /// The hash of the device token this session's login was given or presented: the device is
    /// trusted while that token is (it paid a factor), never by its `deviceID` alone.
    public var deviceTokenHash: [UInt8]? = nil
}

public struct DeviceKeyRecord: Sendable, Equatable {
    public var keyID: String
    public var userID: String
    public var deviceID: String
    public var publicKey: [UInt8]
    public var protection: KeyProtection
    public var createdAt: Int64
    public var lastUsedAt: Int64?
    public var revokedAt: Int64?
    /// The App Attest key that vouched for this key at enrolment (nil: none did).
    public var attestation: DeviceKeyAttestation? = nil
}

/// A device key's App Attest key: which app made it, in which environment, and its counter.
public struct DeviceKeyAttestation: Sendable, Equatable {
    public var appID: String
    public var environment: String
    /// The App Attest key's X9.63 point (its key id is SHA-256 of it).
    public var publicKey: [UInt8]
    /// The newest assertion counter accepted.
    public var counter: UInt32
    public var receipt: [UInt8]
}

public enum KeyProtection: String, Sendable, Equatable {
    /// biometryCurrentSet: biometrics only; a signature is a second factor.
    case biometry
    /// Passcode fallback allowed: proves possession only.
    case userPresence = "user_presence"
}

public struct ChallengeRecord: Sendable, Equatable {
    public var userID: String
    public var deviceID: String
    public var expiresAt: Int64
    public var usedAt: Int64?
}

/// One audit event as stored (never a secret): what was recorded, and the id the database gave
/// it, which orders the events and pages them. Its fields read as the recorded event's.
@dynamicMemberLookup
public struct AuditEvent: Sendable, Equatable {
    public var eventID: Int64
    public var recorded: PendingEvent

    public subscript<Value>(dynamicMember field: KeyPath<PendingEvent, Value>) -> Value { recorded[keyPath: field] }
}

/// The identity service's data behind one seam: every query is portable SQL (bound `?`
/// parameters, `ON CONFLICT`, no SQLite-only functions), so the same store runs on the SQLite
/// file and on PostgreSQL; only the DDL differs per backend (`IdentityMigrations`). Every
/// method is one transaction; on PostgreSQL a `write` is SERIALIZABLE, so its read-decide-write
/// holds across replicas as SQLite's single writer makes it hold in one process.
public final class IdentityStore: Sendable {
    let database: any SQLDatabase

    /// A database opened with `IdentityMigrations.sqlite` or `.postgres`.
    public init(database: any SQLDatabase) {
        self.database = database
    }

    /// True on PostgreSQL, where replicas share the database: per-address budgets then live in
    /// it too (`StoredClientBudget`) instead of in each process's memory.
    public var sharedByReplicas: Bool { database.dialect == .postgres }

    /// The SQLite file at `path` (tests and tools; the process opens through `ServiceHost.openDatabase`).
    public convenience init(path: String, options: DatabaseOptions = .init()) throws {
        self.init(database: try Database(path: path, options: options, migrations: IdentityMigrations.sqlite))
    }

    // MARK: Users

    private static let userColumns = "user_id, username, email, phone, password_hash, sms_verification, sitekey, created_at, email_verified_at, phone_changed_at, locale"
    // Built once: an SQL text made for each call costs its building and a lookup by contents.
    private static let userByID = "SELECT \(userColumns) FROM users WHERE user_id = ?"
    private static let userByUsername = "SELECT \(userColumns) FROM users WHERE username = ?"
    private static let userByEmail = "SELECT \(userColumns) FROM users WHERE email = ?"

    public func user(id: String) throws -> UserRecord? {
        try database.read { c in try user(id: id, c) }
    }

    func user(id: String, _ c: Connection) throws -> UserRecord? {
        try c.queryOne(Self.userByID, [.text(id)]).map(Self.user)
    }

    public func user(username: String) throws -> UserRecord? {
        try database.read { c in try c.queryOne(Self.userByUsername, [.text(username)]).map(Self.user) }
    }

    public func user(email: String) throws -> UserRecord? {
        try database.read { c in try c.queryOne(Self.userByEmail, [.text(email)]).map(Self.user) }
    }

    private static func user(_ row: Row) throws -> UserRecord {
        UserRecord(
            userID: try row.string("user_id"), username: try row.string("username"), email: try row.string("email"),
            phone: try row.string("phone"), passwordHash: try row.string("password_hash"),
            smsVerification: try row.bool("sms_verification"), sitekey: try row.optionalBlob("sitekey"),
            createdAt: try row.int("created_at"), emailVerifiedAt: try row.optionalInt("email_verified_at"),
            phoneChangedAt: try row.optionalInt("phone_changed_at"), locale: MailLocale(stored: try row.optionalString("locale")))
    }

    /// A new password, and in the same transaction the end of both throttles on the old one:
    /// guessers of the old password get no head start, and a second-factor budget a password thief
    /// spent is given back to the owner.
    public func setPasswordHash(userID: String, username: String, hash: String, event: PendingEvent?) throws -> Bool {
        try database.write { c in
            let changed = try c.run("UPDATE users SET password_hash = ? WHERE user_id = ?", [.text(hash), .text(userID)])
            guard changed > 0 else { return false }
            if let event { try Self.insert(event, c) }
            _ = try c.run("DELETE FROM login_throttle WHERE username = ?", [.text(username)])
            try Self.clearFactorThrottle(userID: userID, c)
            return true
        }
    }

    public func setPreferences(userID: String, smsVerification: Bool?, sitekey: [UInt8]??, locale: MailLocale? = nil) throws {
        try database.write { c in
            if let smsVerification {
                _ = try c.run("UPDATE users SET sms_verification = ? WHERE user_id = ?", [SQLValue(smsVerification), .text(userID)])
            }
            if let sitekey {
                _ = try c.run("UPDATE users SET sitekey = ? WHERE user_id = ?", [SQLValue(sitekey), .text(userID)])
            }
            if let locale {
                _ = try c.run("UPDATE users SET locale = ? WHERE user_id = ?", [.text(locale.rawValue), .text(userID)])
            }
        }
    }

    // MARK: Sessions

    /// A successful login: the session, the throttle cleared, the events, and
    /// optionally an upgraded password hash, in one transaction.
    /// Audit events older than `auditKeepSince` are dropped for this user as a side effect (the
    /// trail stays bounded by time without a separate job).
    public func createSession(
        _ session: SessionRecord, tokenHash: [UInt8], clearThrottleFor username: String?, rehash: String?, events: [PendingEvent],
        auditKeepSince: Int64 = 0
    ) throws {
        try database.write { c in
            _ = try c.run("DELETE FROM audit_events WHERE user_id = ? AND at < ?", [.text(session.userID), .integer(auditKeepSince)])
            _ = try c.run(
                """
                INSERT INTO sessions (session_id, token_hash, user_id, device_id, aal, aal2_at, created_at, last_seen_at, expires_at, device_token_hash)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [.text(session.sessionID), .blob(tokenHash), .text(session.userID), .text(session.deviceID), SQLValue(session.aal),
                 SQLValue(session.aal2At), .integer(session.createdAt), .integer(session.lastSeenAt), .integer(session.expiresAt),
                 SQLValue(session.deviceTokenHash)])
            if let username { _ = try c.run("DELETE FROM login_throttle WHERE username = ?", [.text(username)]) }
            if let rehash {
                _ = try c.run("UPDATE users SET password_hash = ? WHERE user_id = ?", [.text(rehash), .text(session.userID)])
            }
            for event in events { try Self.insert(event, c) }
        }
    }

    private static let sessionColumns = "session_id, user_id, device_id, aal, aal2_at, created_at, last_seen_at, expires_at, revoked_at, device_token_hash"
    private static let sessionByTokenHash = "SELECT \(sessionColumns) FROM sessions WHERE token_hash = ?"
    private static let sessionByID = "SELECT \(sessionColumns) FROM sessions WHERE session_id = ?"
    private static let liveSessionsOfUser = """
        SELECT \(sessionColumns) FROM sessions
        WHERE user_id = ? AND revoked_at IS NULL AND expires_at > ? AND last_seen_at > ?
        ORDER BY created_at DESC, session_id DESC LIMIT ?
        """

    public func session(tokenHash: [UInt8]) throws -> SessionRecord? {
        try database.read { c in
            try c.queryOne(Self.sessionByTokenHash, [.blob(tokenHash)]).map(Self.session)
        }
    }

    public func session(id: String) throws -> SessionRecord? {
        try database.read { c in try c.queryOne(Self.sessionByID, [.text(id)]).map(Self.session) }
    }

    /// Live sessions of a user (not revoked, before expiry, seen since `seenSince`), newest first
    /// (session ids sort by creation: they break ties within one second).
    public func liveSessions(userID: String, now: Int64, seenSince: Int64, limit: Int) throws -> [SessionRecord] {
        try database.read { c in
            try c.query(
                Self.liveSessionsOfUser,
                [.text(userID), .integer(now), .integer(seenSince), SQLValue(limit)]
            ).map(Self.session)
        }
    }

    private static func session(_ row: Row) throws -> SessionRecord {
        SessionRecord(
            sessionID: try row.string("session_id"), userID: try row.string("user_id"), deviceID: try row.string("device_id"),
            aal: Int(try row.int("aal")), aal2At: try row.optionalInt("aal2_at"), createdAt: try row.int("created_at"),
            lastSeenAt: try row.int("last_seen_at"), expiresAt: try row.int("expires_at"), revokedAt: try row.optionalInt("revoked_at"),
            deviceTokenHash: try row.optionalBlob("device_token_hash"))
    }

    public func touchSession(id: String, now: Int64) throws {
        try database.write { c in
            _ = try c.run("UPDATE sessions SET last_seen_at = ? WHERE session_id = ? AND last_seen_at < ?", [.integer(now), .text(id), .integer(now)])
        }
    }

    /// Revokes one active session of `userID` (nil: any user). False when there was none.
    public func revokeSession(id: String, userID: String?, now: Int64, event: PendingEvent?) throws -> Bool {
        try database.write { c in
            let changed: Int
            if let userID {
                changed = try c.run("UPDATE sessions SET revoked_at = ? WHERE session_id = ? AND user_id = ? AND revoked_at IS NULL",
                                    [.integer(now), .text(id), .text(userID)])
            } else {
                changed = try c.run("UPDATE sessions SET revoked_at = ? WHERE session_id = ? AND revoked_at IS NULL", [.integer(now), .text(id)])
            }
            if changed > 0, let event { try Self.insert(event, c) }
            return changed > 0
        }
    }

    public func revokeAllSessions(userID: String, now: Int64, event: PendingEvent?) throws -> Int {
        try database.write { c in
            let changed = try c.run("UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL", [.integer(now), .text(userID)])
            if changed > 0, let event { try Self.insert(event, c) }
            return changed
        }
    }

    /// Lifts a session to aal 2 (`aal2_at` = now, also when it already was), trusts the device
    /// token its login was given (so that device owes no factor for being new) and forgets the user's wrong second-factor codes. Nil when the session is unknown, revoked, past its absolute expiry, or not
    /// seen since `seenSince` (idle).
    /// `newDevice`: the session's device token was trusted now for the first time while the user
    /// had another trusted device already (a sign-in from a device the owner should hear of).
    public func elevate(
        sessionID: String, now: Int64, seenSince: Int64, events: (SessionRecord) -> [PendingEvent]
    ) throws -> (session: SessionRecord, newDevice: Bool)? {
        try database.write { c in
            guard let row = try c.queryOne(Self.sessionByID, [.text(sessionID)]) else { return nil }
            var session = try Self.session(row)
            guard session.revokedAt == nil, session.expiresAt > now, session.lastSeenAt > seenSince else { return nil }
            _ = try c.run("UPDATE sessions SET aal = 2, aal2_at = ?, last_seen_at = ? WHERE session_id = ?", [.integer(now), .integer(now), .text(sessionID)])
            var newDevice = false
            if let tokenHash = session.deviceTokenHash {
                let trusted = try c.run("UPDATE device_tokens SET trusted_at = ? WHERE token_hash = ? AND user_id = ? AND trusted_at IS NULL",
                                        [.integer(now), .blob(tokenHash), .text(session.userID)])
                if trusted > 0 {
                    newDevice = try c.queryOne(
                        "SELECT COUNT(*) AS n FROM device_tokens WHERE user_id = ? AND token_hash <> ? AND trusted_at IS NOT NULL",
                        [.text(session.userID), .blob(tokenHash)])?.int("n") ?? 0 > 0
                }
            }
            for event in events(session) { try Self.insert(event, c) }
            try Self.clearFactorThrottle(userID: session.userID, c)
            session.aal = 2
            session.aal2At = now
            session.lastSeenAt = now
            return (session, newDevice)
        }
    }

    // MARK: Device keys

    private static let keyColumns = """
        key_id, user_id, device_id, public_key, protection, created_at, last_used_at, revoked_at, attest_app_id, attest_environment,
        attest_public_key, attest_counter
        """
    private static let latestKeyOfDevice =
        "SELECT \(keyColumns) FROM device_keys WHERE user_id = ? AND device_id = ? ORDER BY created_at DESC, revoked_at IS NULL DESC LIMIT 1"
    private static let activeKeysOfUser = "SELECT \(keyColumns) FROM device_keys WHERE user_id = ? AND revoked_at IS NULL ORDER BY created_at, key_id"

    /// Enrolls a key for a device: revokes the device's previous key, refuses past `limit` active keys.
    public func enrollKey(_ key: DeviceKeyRecord, limit: Int, events: [PendingEvent]) throws {
        try database.write { c in
            _ = try c.run("UPDATE device_keys SET revoked_at = ? WHERE user_id = ? AND device_id = ? AND revoked_at IS NULL",
                          [.integer(key.createdAt), .text(key.userID), .text(key.deviceID)])
            let active = try c.queryOne("SELECT COUNT(*) AS n FROM device_keys WHERE user_id = ? AND revoked_at IS NULL", [.text(key.userID)])?.int("n") ?? 0
            guard active < limit else { throw IdentityError.keyLimit(limit) }
            _ = try c.run(
                """
                INSERT INTO device_keys (key_id, user_id, device_id, public_key, protection, created_at, attest_app_id, attest_environment,
                    attest_public_key, attest_counter, attest_receipt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(key.keyID), .text(key.userID), .text(key.deviceID), .blob(key.publicKey), .text(key.protection.rawValue), .integer(key.createdAt),
                    SQLValue(key.attestation?.appID), SQLValue(key.attestation?.environment), SQLValue(key.attestation?.publicKey),
                    SQLValue(key.attestation.map { Int64($0.counter) }), SQLValue(key.attestation?.receipt),
                ])
            for event in events { try Self.insert(event, c) }
        }
    }

    /// The device's newest key for this user, active or revoked (nil: never had one).
    public func latestKey(userID: String, deviceID: String) throws -> DeviceKeyRecord? {
        try database.read { c in
            try c.queryOne(
                Self.latestKeyOfDevice,
                [.text(userID), .text(deviceID)]
            ).map(Self.key)
        }
    }

    public func activeKeys(userID: String) throws -> [DeviceKeyRecord] {
        try database.read { c in
            try c.query(Self.activeKeysOfUser, [.text(userID)]).map(Self.key)
        }
    }

    public func revokeKey(keyID: String, userID: String, now: Int64, event: PendingEvent?) throws -> Bool {
        try database.write { c in
            let changed = try c.run("UPDATE device_keys SET revoked_at = ? WHERE key_id = ? AND user_id = ? AND revoked_at IS NULL",
                                    [.integer(now), .text(keyID), .text(userID)])
            if changed > 0, let event { try Self.insert(event, c) }
            return changed > 0
        }
    }

    private static func key(_ row: Row) throws -> DeviceKeyRecord {
        DeviceKeyRecord(
            keyID: try row.string("key_id"), userID: try row.string("user_id"), deviceID: try row.string("device_id"),
            publicKey: try row.blob("public_key"), protection: KeyProtection(rawValue: try row.string("protection")) ?? .userPresence,
            createdAt: try row.int("created_at"), lastUsedAt: try row.optionalInt("last_used_at"), revokedAt: try row.optionalInt("revoked_at"),
            attestation: try row.optionalString("attest_app_id").map { appID in
                DeviceKeyAttestation(
                    appID: appID, environment: try row.optionalString("attest_environment") ?? "", publicKey: try row.optionalBlob("attest_public_key") ?? [],
                    counter: UInt32(clamping: try row.optionalInt("attest_counter") ?? 0), receipt: [])
            })
    }

    /// Takes an App Attest assertion's counter for the key: one conditional update, so of two
    /// assertions racing (across replicas too) only a counter above the stored one wins.
    public func advanceAttestCounter(keyID: String, to counter: UInt32) throws -> Bool {
        try database.write { c in
            try c.run(
                "UPDATE device_keys SET attest_counter = ? WHERE key_id = ? AND attest_counter < ? AND revoked_at IS NULL",
                [.integer(Int64(counter)), .text(keyID), .integer(Int64(counter))]) > 0
        }
    }

    // MARK: Challenges

    public func insertChallenge(hash: [UInt8], userID: String, deviceID: String, expiresAt: Int64, now: Int64) throws {
        try database.write { c in
            // Challenges are useless once expired: drop old ones as new ones come.
            _ = try c.run("DELETE FROM challenges WHERE expires_at < ?", [.integer(now - 3600)])
            _ = try c.run("INSERT INTO challenges (challenge_hash, user_id, device_id, expires_at) VALUES (?, ?, ?, ?)",
                          [.blob(hash), .text(userID), .text(deviceID), .integer(expiresAt)])
        }
    }

    /// Marks a challenge used and returns it as it was before (nil: unknown). A challenge bound
    /// to another user or device is not consumed (its owner may still use it).
    /// `settle`, in the same transaction, given the challenge as it was: what to record, and the
    /// key to mark used (key login decides and audits in the write that uses the challenge up).
    public func consumeChallenge(
        hash: [UInt8], userID: String, deviceID: String, now: Int64,
        settle: (ChallengeRecord) -> (usedKey: String?, events: [PendingEvent])? = { _ in nil }
    ) throws -> ChallengeRecord? {
        try database.write { c in
            guard let row = try c.queryOne("SELECT user_id, device_id, expires_at, used_at FROM challenges WHERE challenge_hash = ?", [.blob(hash)]) else {
                return nil
            }
            let record = ChallengeRecord(
                userID: try row.string("user_id"), deviceID: try row.string("device_id"),
                expiresAt: try row.int("expires_at"), usedAt: try row.optionalInt("used_at"))
            if record.userID == userID, record.deviceID == deviceID, record.usedAt == nil {
                _ = try c.run("UPDATE challenges SET used_at = ? WHERE challenge_hash = ? AND used_at IS NULL", [.integer(now), .blob(hash)])
            }
            if let settled = settle(record) {
                if let keyID = settled.usedKey {
                    _ = try c.run("UPDATE device_keys SET last_used_at = ? WHERE key_id = ?", [.integer(now), .text(keyID)])
                }
                for event in settled.events { try Self.insert(event, c) }
            }
            return record
        }
    }

    public func markKeyUsed(keyID: String, now: Int64, events: [PendingEvent]) throws {
        try database.write { c in
            _ = try c.run("UPDATE device_keys SET last_used_at = ? WHERE key_id = ?", [.integer(now), .text(keyID)])
            for event in events { try Self.insert(event, c) }
        }
    }

    // MARK: Audit

    public func record(_ events: [PendingEvent]) throws {
        guard !events.isEmpty else { return }
        try database.write { c in for event in events { try Self.insert(event, c) } }
    }

    /// Newest first; `before` is an event id from a previous page.
    public func events(userID: String, limit: Int, before: Int64?) throws -> [AuditEvent] {
        try database.read { c in
            try c.query(
                "SELECT event_id, user_id, event, outcome, device_id, client, at FROM audit_events WHERE user_id = ? AND event_id < ? ORDER BY event_id DESC LIMIT ?",
                [.text(userID), .integer(before ?? Int64.max), SQLValue(limit)]
            ).map { row in
                AuditEvent(
                    eventID: try row.int("event_id"),
                    recorded: PendingEvent(
                        userID: try row.string("user_id"), event: try row.string("event"), outcome: try row.string("outcome"),
                        deviceID: try row.optionalString("device_id"), client: try row.optionalString("client"), at: try row.int("at")))
            }
        }
    }

    static func insert(_ event: PendingEvent, _ c: Connection) throws {
        _ = try c.run(
            "INSERT INTO audit_events (user_id, event, outcome, device_id, client, at) VALUES (?, ?, ?, ?, ?, ?)",
            [.text(event.userID), .text(event.event), .text(event.outcome), SQLValue(event.deviceID), SQLValue(event.client), .integer(event.at)])
    }
}

/// An audit event about to be written (the id comes from the database).
public struct PendingEvent: Sendable, Equatable {
    public var userID: String
    public var event: String
    public var outcome: String
    public var deviceID: String?
    public var client: String?
    public var at: Int64

    public init(userID: String, event: String, outcome: String, deviceID: String?, client: String?, at: Int64) {
        self.userID = userID
        self.event = event
        self.outcome = outcome
        self.deviceID = deviceID
        self.client = client
        self.at = at
    }
}
