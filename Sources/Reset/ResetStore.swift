import LineProtocol
import Storage

/// A live reset token as the store knows it: never the token itself, only what its hash maps to.
public struct ResetTokenRecord: Sendable, Equatable {
    public let tokenID: Int64
    public let userID: String
    public let createdAtMilliseconds: Int64
    public let expiresAtMilliseconds: Int64
}

/// One rate-limit rule: at most `limit` admitted requests for `subject` in the last `windowMilliseconds`.
public struct RateRule: Sendable, Equatable {
    /// Which budget this is, for logs and metrics (`address_interval`, `address_hourly`, `client_hourly`).
    public let name: String
    /// An opaque key: a hash of the e-mail address, or the client address. Never a raw e-mail.
    public let subject: String
    public let limit: Int
    public let windowMilliseconds: Int64

    public init(name: String, subject: String, limit: Int, windowMilliseconds: Int64) {
        precondition(limit > 0 && windowMilliseconds > 0)
        self.name = name
        self.subject = subject
        self.limit = limit
        self.windowMilliseconds = windowMilliseconds
    }
}

/// The reset service's data, behind a seam (`SQLResetStore` on SQLite or PostgreSQL).
/// Every method is one transaction. Requests are admitted by the rate rules as their job is
/// queued (`ResetJobQueue.admitAndQueue`).
public protocol ResetStore: ResetJobQueue {
    /// Stores a new token hash and ends (supersedes) the user's other live tokens, atomically.
    /// Returns how many tokens were superseded.
    func issue(tokenHash: [UInt8], userID: String, nowMilliseconds: Int64, expiresAtMilliseconds: Int64) throws -> Int
    /// The token with this hash if it is unused, not superseded and not expired.
    func liveToken(hash: [UInt8], nowMilliseconds: Int64) throws -> ResetTokenRecord?
    /// Marks the token used if it is still live: true for exactly one caller.
    func claim(tokenID: Int64, nowMilliseconds: Int64) throws -> Bool
    /// Undoes a claim whose follow-up (set password, revoke sessions) failed, so the user can retry.
    func release(tokenID: Int64) throws
    /// After a completed reset: supersede every other live token of the user.
    func supersedeLive(userID: String, nowMilliseconds: Int64) throws -> Int
    /// Deletes request records from before `requestsBefore` and tokens that expired before
    /// `tokensEndedBefore` (unix milliseconds).
    func prune(requestsBefore: Int64, tokensEndedBefore: Int64) throws
    /// A deleted user's tokens and queued mails; the per-address limits stay (keyed hashes).
    func eraseUser(userID: String, email: String?) throws -> Int
    /// The user's reset links for the data export (times only; never a token or its hash).
    func linksForExport(userID: String) throws -> [JSON]
}

/// The store on SQLite or PostgreSQL (`ResetMigrations`): `reset_tokens` (hashes only),
/// `reset_requests` (rate-limit records) and `reset_jobs`. Every query is portable SQL; on
/// PostgreSQL a `write` is SERIALIZABLE, so a count-then-insert admission holds across
/// replicas as SQLite's single writer makes it hold in one process.
public final class SQLResetStore: ResetStore {
    public let database: any SQLDatabase

    /// A database opened with `ResetMigrations.sqlite` or `.postgres`.
    public init(database: any SQLDatabase) {
        self.database = database
    }

    /// The SQLite file at `path` (tests and tools; the process opens through `ServiceHost.openDatabase`).
    public convenience init(path: String, options: DatabaseOptions = SQLResetStore.sqliteOptions) throws {
        self.init(database: try Database(path: path, options: options, migrations: ResetMigrations.sqlite))
    }

    public static let sqliteOptions = DatabaseOptions(synchronous: .full, readerCount: 2)

    /// The first rule with no room left, inside the caller's transaction.
    static func firstRefusal(_ c: Connection, _ rules: [RateRule], nowMilliseconds now: Int64) throws -> RateRule? {
        for rule in rules {
            let row = try c.queryOne(
                "SELECT COUNT(*) AS n FROM reset_requests WHERE subject = ? AND at_ms > ?",
                [.text(rule.subject), .integer(now - rule.windowMilliseconds)])
            if try (row?.int("n") ?? 0) >= Int64(rule.limit) { return rule }
        }
        return nil
    }

    /// Records one admitted request against each subject, inside the caller's transaction.
    static func record(_ c: Connection, _ rules: [RateRule], nowMilliseconds now: Int64) throws {
        var recorded = Set<String>()
        for rule in rules where recorded.insert(rule.subject).inserted {
            try c.run("INSERT INTO reset_requests (subject, at_ms) VALUES (?, ?)", [.text(rule.subject), .integer(now)])
        }
    }

    public func issue(tokenHash: [UInt8], userID: String, nowMilliseconds now: Int64, expiresAtMilliseconds: Int64) throws -> Int {
        precondition(tokenHash.count == 32 && expiresAtMilliseconds > now)
        return try database.write { c in
            let superseded = try c.run(
                "UPDATE reset_tokens SET superseded_at_ms = ? WHERE user_id = ? AND used_at_ms IS NULL AND superseded_at_ms IS NULL AND expires_at_ms > ?",
                [.integer(now), .text(userID), .integer(now)])
            try c.run(
                "INSERT INTO reset_tokens (token_hash, user_id, created_at_ms, expires_at_ms) VALUES (?, ?, ?, ?)",
                [.blob(tokenHash), .text(userID), .integer(now), .integer(expiresAtMilliseconds)])
            return superseded
        }
    }

    public func liveToken(hash: [UInt8], nowMilliseconds now: Int64) throws -> ResetTokenRecord? {
        try database.read { c in
            guard let row = try c.queryOne("""
                SELECT token_id, token_hash, user_id, created_at_ms, expires_at_ms FROM reset_tokens
                WHERE token_hash = ? AND used_at_ms IS NULL AND superseded_at_ms IS NULL AND expires_at_ms > ?
                """, [.blob(hash), .integer(now)])
            else { return nil }
            let record = ResetTokenRecord(
                tokenID: try row.int("token_id"), userID: try row.string("user_id"),
                createdAtMilliseconds: try row.int("created_at_ms"), expiresAtMilliseconds: try row.int("expires_at_ms"))
            // Checked after the read too: the index found it, the stored bytes must match exactly.
            assert(record.expiresAtMilliseconds > now && record.createdAtMilliseconds <= record.expiresAtMilliseconds)
            return try row.blob("token_hash") == hash ? record : nil
        }
    }

    public func claim(tokenID: Int64, nowMilliseconds now: Int64) throws -> Bool {
        try database.write { c in
            try c.run(
                "UPDATE reset_tokens SET used_at_ms = ? WHERE token_id = ? AND used_at_ms IS NULL AND superseded_at_ms IS NULL AND expires_at_ms > ?",
                [.integer(now), .integer(tokenID), .integer(now)]) == 1
        }
    }

    public func release(tokenID: Int64) throws {
        try database.write { c in
            _ = try c.run("UPDATE reset_tokens SET used_at_ms = NULL WHERE token_id = ?", [.integer(tokenID)])
        }
    }

    public func supersedeLive(userID: String, nowMilliseconds now: Int64) throws -> Int {
        try database.write { c in
            try c.run(
                "UPDATE reset_tokens SET superseded_at_ms = ? WHERE user_id = ? AND used_at_ms IS NULL AND superseded_at_ms IS NULL",
                [.integer(now), .text(userID)])
        }
    }

    public func linksForExport(userID: String) throws -> [JSON] {
        try database.read { c in
            try c.query("""
                SELECT created_at_ms, expires_at_ms, used_at_ms, superseded_at_ms FROM reset_tokens WHERE user_id = ?
                ORDER BY created_at_ms DESC LIMIT 10000
                """, [.text(userID)]
            ).map { row -> JSON in
                [
                    "created_at": .int(try row.int("created_at_ms") / 1000), "expires_at": .int(try row.int("expires_at_ms") / 1000),
                    "used_at": try row.optionalInt("used_at_ms").map { .int($0 / 1000) } ?? .null,
                    "superseded_at": try row.optionalInt("superseded_at_ms").map { .int($0 / 1000) } ?? .null,
                ]
            }
        }
    }

    public func eraseUser(userID: String, email: String?) throws -> Int {
        try database.write { c in
            let tokens = try c.run("DELETE FROM reset_tokens WHERE user_id = ?", [.text(userID)])
            let jobs = try c.run("DELETE FROM reset_jobs WHERE user_id = ? OR address = ?", [.text(userID), SQLValue(email)])
            return tokens + jobs
        }
    }

    public func prune(requestsBefore: Int64, tokensEndedBefore: Int64) throws {
        try database.write { c in
            try c.run("DELETE FROM reset_requests WHERE at_ms < ?", [.integer(requestsBefore)])
            try c.run("DELETE FROM reset_tokens WHERE expires_at_ms < ?", [.integer(tokensEndedBefore)])
        }
    }
}
