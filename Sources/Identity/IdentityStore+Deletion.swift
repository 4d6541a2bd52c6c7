import Contract
import Delivery
import LineProtocol
import Storage

/// One account deletion as identity records it: the saga's durable state. `email` and `phone`
/// stay only until the services that need them (verification, reset, the last mail) are done.
public struct DeletionRecord: Sendable, Equatable {
    public var userID: String
    /// The name accounts keeps the closed accounts and their ledger under.
    public var pseudonym: String
    public var email: String?
    public var phone: String?
    /// The language of the last mail.
    public var locale: MailLocale
    public var state: DeletionState
    /// Why accounts refused (`balance_not_zero`), with the balances it reported.
    public var detail: String?
    public var balances: JSON?
    public var verificationDone: Bool
    public var resetDone: Bool
    public var requestedAt: Int64
    public var finishedAt: Int64?

    /// The services whose part is still to do.
    public var waitingFor: [String] {
        switch state {
        case .closingAccounts, .blocked: AccountDeletionContract.followers
        case .erasing: (verificationDone ? [] : ["verification"]) + (resetDone ? [] : ["reset"])
        case .mailing, .deleted: []
        }
    }
}

extension IdentityStore {
    private static let deletionColumns = """
        user_id, pseudonym, email, phone, locale, state, detail, balances, verification_done_at, reset_done_at, requested_at, finished_at
        """

    /// Records the deletion unless one is recorded already (a retry or a twin): the record as stored.
    public func recordDeletion(_ record: DeletionRecord, event: PendingEvent) throws -> DeletionRecord {
        try database.write { c in
            if let existing = try Self.deletion(userID: record.userID, c) { return existing }
            _ = try c.run(
                "INSERT INTO account_deletions (user_id, pseudonym, email, phone, locale, state, requested_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [.text(record.userID), .text(record.pseudonym), SQLValue(record.email), SQLValue(record.phone), .text(record.locale.rawValue),
                 .text(record.state.rawValue), .integer(record.requestedAt)])
            try Self.insert(event, c)
            return record
        }
    }

    public func deletion(userID: String) throws -> DeletionRecord? {
        try database.read { c in try Self.deletion(userID: userID, c) }
    }

    /// Deletions not finished, oldest first.
    public func unfinishedDeletions(limit: Int) throws -> [DeletionRecord] {
        try database.read { c in
            try c.query(
                "SELECT \(Self.deletionColumns) FROM account_deletions WHERE state <> 'deleted' ORDER BY requested_at, user_id LIMIT ?",
                [SQLValue(limit)]
            ).map(Self.deletion)
        }
    }

    /// The deletions whose erasure `service` has still to do.
    public func erasuresDue(service: String, limit: Int) throws -> [DeletionRecord] {
        let condition = switch service {
        case "accounts": "state = 'closing_accounts'"
        case "verification": "state = 'erasing' AND verification_done_at IS NULL"
        default: "state = 'erasing' AND reset_done_at IS NULL"
        }
        return try database.read { c in
            try c.query(
                "SELECT \(Self.deletionColumns) FROM account_deletions WHERE \(condition) ORDER BY requested_at LIMIT ?", [SQLValue(limit)]
            ).map(Self.deletion)
        }
    }

    /// Accounts closed the user's accounts: in one transaction, every row of identity that names
    /// the user goes and the record moves on to the other services. Repeating it changes nothing.
    public func accountsClosed(userID: String) throws -> DeletionRecord? {
        try database.write { c in
            guard var record = try Self.deletion(userID: userID, c) else { return nil }
            guard record.state == .closingAccounts || record.state == .blocked else { return record }
            try Self.eraseUser(userID, c)
            _ = try c.run(
                "UPDATE account_deletions SET state = 'erasing', detail = NULL, balances = NULL WHERE user_id = ?", [.text(userID)])
            record.state = .erasing
            record.detail = nil
            record.balances = nil
            return record
        }
    }

    /// Accounts refused (money left): the deletion waits for the operator; nothing was erased.
    public func accountsRefused(userID: String, detail: String, balances: JSON?) throws -> DeletionRecord? {
        try database.write { c in
            guard var record = try Self.deletion(userID: userID, c) else { return nil }
            guard record.state == .closingAccounts else { return record }
            _ = try c.run(
                "UPDATE account_deletions SET state = 'blocked', detail = ?, balances = ? WHERE user_id = ?",
                [.text(detail), SQLValue(balances.map { String(decoding: $0.encoded(), as: UTF8.self) }), .text(userID)])
            record.state = .blocked
            record.detail = detail
            record.balances = balances
            return record
        }
    }

    /// The operator settled a blocked deletion: accounts is asked again.
    public func resumeDeletion(userID: String) throws -> DeletionRecord? {
        try database.write { c in
            guard var record = try Self.deletion(userID: userID, c) else { return nil }
            guard record.state == .blocked else { return record }
            _ = try c.run("UPDATE account_deletions SET state = 'closing_accounts' WHERE user_id = ?", [.text(userID)])
            record.state = .closingAccounts
            return record
        }
    }

    /// Verification or reset erased its part; once both have, the phone number goes from the
    /// record and the last mail is due.
    public func followerErased(userID: String, service: String, now: Int64) throws -> DeletionRecord? {
        let column = service == "verification" ? "verification_done_at" : "reset_done_at"
        return try database.write { c in
            guard try Self.deletion(userID: userID, c)?.state == .erasing else { return try Self.deletion(userID: userID, c) }
            _ = try c.run("UPDATE account_deletions SET \(column) = ? WHERE user_id = ? AND \(column) IS NULL", [.integer(now), .text(userID)])
            _ = try c.run("""
                UPDATE account_deletions SET state = 'mailing', phone = NULL
                WHERE user_id = ? AND verification_done_at IS NOT NULL AND reset_done_at IS NOT NULL
                """, [.text(userID)])
            return try Self.deletion(userID: userID, c)
        }
    }

    /// Takes the deletions whose last mail is due and not being sent (or whose sender stopped
    /// before `leaseUntil` of an earlier claim ran out): at least once, never by two at a time.
    public func claimLastMails(now: Int64, leaseUntil: Int64, limit: Int) throws -> [DeletionRecord] {
        try database.write { c in
            let due = try c.query("""
                SELECT \(Self.deletionColumns) FROM account_deletions
                WHERE state = 'mailing' AND (mail_lease_until IS NULL OR mail_lease_until < ?) ORDER BY requested_at LIMIT ?
                """, [.integer(now), SQLValue(limit)]).map(Self.deletion)
            return try due.filter { record in
                try c.run(
                    "UPDATE account_deletions SET mail_lease_until = ? WHERE user_id = ? AND (mail_lease_until IS NULL OR mail_lease_until < ?)",
                    [.integer(leaseUntil), .text(record.userID), .integer(now)]) == 1
            }
        }
    }

    /// The last mail went (or could never go): the address leaves the record, which keeps only
    /// the ids, the times and the pseudonym.
    public func finishDeletion(userID: String, now: Int64) throws {
        try database.write { c in
            _ = try c.run(
                "UPDATE account_deletions SET state = 'deleted', email = NULL, finished_at = ?, mail_lease_until = NULL WHERE user_id = ? AND state = 'mailing'",
                [.integer(now), .text(userID)])
        }
    }

    /// Every row that names the user, children before the user row itself.
    private static func eraseUser(_ userID: String, _ c: Connection) throws {
        if let username = try c.queryOne("SELECT username FROM users WHERE user_id = ?", [.text(userID)])?.string("username") {
            _ = try c.run("DELETE FROM login_throttle WHERE username = ?", [.text(username)])
        }
        for table in [
            "sessions", "device_keys", "device_tokens", "challenges", "phone_proofs", "email_tokens", "totp_secrets", "recovery_codes",
            "passkeys", "passkey_challenges", "factor_throttle", "audit_events", "phone_notices", "users",
        ] {
            _ = try c.run("DELETE FROM \(table) WHERE user_id = ?", [.text(userID)])
        }
    }

    private static func deletion(userID: String, _ c: Connection) throws -> DeletionRecord? {
        try c.queryOne("SELECT \(deletionColumns) FROM account_deletions WHERE user_id = ?", [.text(userID)]).map(deletion)
    }

    private static func deletion(_ row: Row) throws -> DeletionRecord {
        let balances = try row.optionalString("balances").flatMap { try? JSONParser.parse($0) }
        return DeletionRecord(
            userID: try row.string("user_id"), pseudonym: try row.string("pseudonym"), email: try row.optionalString("email"),
            phone: try row.optionalString("phone"), locale: MailLocale(stored: try row.optionalString("locale")), state: DeletionState(rawValue: try row.string("state")) ?? .closingAccounts,
            detail: try row.optionalString("detail"), balances: balances,
            verificationDone: try row.optionalInt("verification_done_at") != nil, resetDone: try row.optionalInt("reset_done_at") != nil,
            requestedAt: try row.int("requested_at"), finishedAt: try row.optionalInt("finished_at"))
    }
}
