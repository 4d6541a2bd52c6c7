import Delivery
import Storage

/// What an e-mail link does when it is used.
public enum EmailTokenPurpose: String, Sendable, Equatable {
    /// Proves the user's address (mailed at registration and on request).
    case verify
    /// Applies a pending change: mailed to the new address.
    case change
    /// Undoes a change: mailed to the old address, valid for a week.
    case revert
}

/// One mailed link as stored: its hash, never the token.
public struct EmailTokenRecord: Sendable, Equatable {
    public var tokenHash: [UInt8]
    public var purpose: EmailTokenPurpose
    public var userID: String
    /// The address the link is about: the one to verify, the new one, or the old one to restore.
    public var email: String
    /// Ties a change's confirmation to its revert link.
    public var changeID: String?
    /// A revert link: when the old address had been verified (restored with it).
    public var previousVerifiedAt: Int64?
    public var createdAt: Int64
    public var expiresAt: Int64
}

/// Why a link did nothing. One answer to the caller for all but `addressTaken`.
public enum EmailTokenRefusal: Error, Sendable, Equatable {
    /// Unknown, used, expired, or about an address the user no longer has.
    case invalid
    /// The address the link would set belongs to another account now.
    case addressTaken
}

extension IdentityStore {
    private static let tokenColumns = "token_hash, purpose, user_id, email, change_id, previous_verified_at, created_at, expires_at"

    /// Inserts a user with the link that proves its address, in one transaction; `conflict`
    /// naming `username` or `email` when either is taken.
    public func insertUser(_ user: UserRecord, verification: EmailTokenRecord, events: [PendingEvent]) throws {
        do {
            try database.write { c in
                _ = try c.run(
                    """
                    INSERT INTO users (user_id, username, email, phone, password_hash, sms_verification, sitekey, created_at, email_verified_at, locale)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                    [.text(user.userID), .text(user.username), .text(user.email), .text(user.phone), .text(user.passwordHash),
                     SQLValue(user.smsVerification), SQLValue(user.sitekey), .integer(user.createdAt), SQLValue(user.emailVerifiedAt),
                     .text(user.locale.rawValue)])
                try Self.insert(verification, c)
                for event in events { try Self.insert(event, c) }
            }
        } catch StorageError.constraintUnique(let what) {
            if what.contains("email") { throw IdentityError.conflict(field: "email", "this e-mail address is already registered") }
            throw IdentityError.conflict(field: "username", "this username is taken")
        }
    }

    /// Adds a link of `purpose` and voids the user's earlier unused ones of the same purpose
    /// (a second change or a resend makes the first link useless).
    /// `interval`: refused (`linkTooSoon`) when a link of the first token's purpose was issued
    /// less than this long ago, decided in the same transaction, so parallel asks mail one link.
    public func issueEmailTokens(
        _ tokens: [EmailTokenRecord], voidingEarlier purposes: [EmailTokenPurpose], now: Int64, interval: Int64? = nil, event: PendingEvent
    ) throws {
        guard let first = tokens.first else { return }
        let userID = first.userID
        try database.write { c in
            if let interval, let latest = try c.queryOne(
                "SELECT MAX(created_at) AS at FROM email_tokens WHERE user_id = ? AND purpose = ?", [.text(userID), .text(first.purpose.rawValue)]
            )?.optionalInt("at"), now - latest < interval {
                throw IdentityError.linkTooSoon(retryAfterSeconds: interval - (now - latest))
            }
            for purpose in purposes {
                _ = try c.run(
                    "UPDATE email_tokens SET used_at = ? WHERE user_id = ? AND purpose = ? AND used_at IS NULL",
                    [.integer(now), .text(userID), .text(purpose.rawValue)])
            }
            for token in tokens { try Self.insert(token, c) }
            try Self.insert(event, c)
        }
    }

    /// Uses a link once: marks it used and applies it, in one transaction, so that of links
    /// used at once exactly one applies. `apply` gets the link and the user as they are now, and
    /// may refuse (`EmailTokenRefusal`): then nothing changes, the link included.
    public func useEmailToken(
        hash: [UInt8], purpose: EmailTokenPurpose, now: Int64,
        apply: (EmailTokenRecord, UserRecord, Connection) throws -> [PendingEvent]
    ) throws -> Result<(token: EmailTokenRecord, user: UserRecord), EmailTokenRefusal> {
        do {
            return try database.write { c in
                guard let row = try c.queryOne(
                    "SELECT \(Self.tokenColumns) FROM email_tokens WHERE token_hash = ? AND purpose = ? AND used_at IS NULL AND expires_at > ?",
                    [.blob(hash), .text(purpose.rawValue), .integer(now)])
                else { throw EmailTokenRefusal.invalid }
                let token = try Self.emailToken(row)
                guard try c.run("UPDATE email_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL", [.integer(now), .blob(hash)]) == 1,
                    let user = try self.user(id: token.userID, c)
                else { throw EmailTokenRefusal.invalid }
                for event in try apply(token, user, c) { try Self.insert(event, c) }
                return .success((token, user))
            }
        } catch let refusal as EmailTokenRefusal {
            return .failure(refusal)
        } catch StorageError.constraintUnique {
            return .failure(.addressTaken)
        }
    }

    /// A new password for a signed-in user, in one transaction: the hash, the end of both
    /// throttles (as a reset does), and the end of every other session and device token
    /// (`keep`: the caller's own session and the device token its login gave). Returns how many
    /// sessions ended.
    public func changePassword(
        userID: String, username: String, hash: String, keep: (sessionID: String, deviceTokenHash: [UInt8]?), now: Int64, events: [PendingEvent]
    ) throws -> Int {
        try database.write { c in
            guard try c.run("UPDATE users SET password_hash = ? WHERE user_id = ?", [.text(hash), .text(userID)]) > 0 else {
                throw IdentityError.unauthenticated
            }
            _ = try c.run("DELETE FROM login_throttle WHERE username = ?", [.text(username)])
            try Self.clearFactorThrottle(userID: userID, c)
            let ended = try c.run(
                "UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL AND session_id <> ?",
                [.integer(now), .text(userID), .text(keep.sessionID)])
            if let kept = keep.deviceTokenHash {
                _ = try c.run("DELETE FROM device_tokens WHERE user_id = ? AND token_hash <> ?", [.text(userID), .blob(kept)])
            } else {
                _ = try c.run("DELETE FROM device_tokens WHERE user_id = ?", [.text(userID)])
            }
            for event in events { try Self.insert(event, c) }
            return ended
        }
    }

    /// Another phone number on the profile, unproven until its owner passes a proof code.
    /// The new number, and in the same transaction the SMS notice owed to the old one.
    public func changePhone(userID: String, phone: String, notifying old: (number: String, locale: MailLocale), now: Int64, event: PendingEvent) throws {
        try database.write { c in
            guard try c.run("UPDATE users SET phone = ?, phone_changed_at = ? WHERE user_id = ?", [.text(phone), .integer(now), .text(userID)]) > 0 else {
                throw IdentityError.unauthenticated
            }
            try c.run(
                "INSERT INTO phone_notices (user_id, number, locale, created_at) VALUES (?, ?, ?, ?)",
                [.text(userID), .text(old.number), .text(old.locale.rawValue), .integer(now)])
            try Self.insert(event, c)
        }
    }

    /// An operator's word that the user's current address is theirs. False when it was already.
    public func markEmailVerified(userID: String, now: Int64, event: PendingEvent) throws -> Bool {
        try database.write { c in
            guard let user = try self.user(id: userID, c) else { throw IdentityError.notFound("no such user") }
            guard try Self.markVerified(userID: userID, email: user.email, at: now, c) else { return false }
            try Self.insert(event, c)
            return true
        }
    }

    /// Marks the user's current address verified (false when it is not `email` any more).
    static func markVerified(userID: String, email: String, at: Int64, _ c: Connection) throws -> Bool {
        try c.run(
            "UPDATE users SET email_verified_at = ? WHERE user_id = ? AND email = ? AND email_verified_at IS NULL",
            [.integer(at), .text(userID), .text(email)]) > 0
    }

    /// Sets the user's address and its verified state; a unique-constraint error when another
    /// account has it.
    static func setEmail(userID: String, email: String, verifiedAt: Int64?, _ c: Connection) throws {
        _ = try c.run("UPDATE users SET email = ?, email_verified_at = ? WHERE user_id = ?", [.text(email), SQLValue(verifiedAt), .text(userID)])
    }

    /// The other links of one change (the confirmation once reverted, the revert once confirmed
    /// stays usable: it is the way back).
    static func voidChange(_ changeID: String, purpose: EmailTokenPurpose, now: Int64, _ c: Connection) throws {
        _ = try c.run(
            "UPDATE email_tokens SET used_at = ? WHERE change_id = ? AND purpose = ? AND used_at IS NULL",
            [.integer(now), .text(changeID), .text(purpose.rawValue)])
    }

    /// Every session ends and every device token goes (after a revert: whoever changed the
    /// address may hold them).
    static func endEverySession(userID: String, now: Int64, _ c: Connection) throws -> (sessions: Int, deviceTokens: Int) {
        let sessions = try c.run("UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL", [.integer(now), .text(userID)])
        let tokens = try c.run("DELETE FROM device_tokens WHERE user_id = ?", [.text(userID)])
        return (sessions, tokens)
    }

    private static func insert(_ token: EmailTokenRecord, _ c: Connection) throws {
        _ = try c.run(
            "INSERT INTO email_tokens (\(tokenColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [.blob(token.tokenHash), .text(token.purpose.rawValue), .text(token.userID), .text(token.email), SQLValue(token.changeID),
             SQLValue(token.previousVerifiedAt), .integer(token.createdAt), .integer(token.expiresAt)])
    }

    private static func emailToken(_ row: Row) throws -> EmailTokenRecord {
        EmailTokenRecord(
            tokenHash: try row.blob("token_hash"), purpose: EmailTokenPurpose(rawValue: try row.string("purpose")) ?? .verify,
            userID: try row.string("user_id"), email: try row.string("email"), changeID: try row.optionalString("change_id"),
            previousVerifiedAt: try row.optionalInt("previous_verified_at"), createdAt: try row.int("created_at"),
            expiresAt: try row.int("expires_at"))
    }
}
