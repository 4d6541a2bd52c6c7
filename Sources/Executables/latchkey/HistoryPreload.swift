import Accounts
import FoundationEssentials
import Identity
import Storage
import Verification

/// A realistic past written straight into the services' SQLite files before they start (the
/// `long` bench): users with sessions and an audit trail, a week of sent codes, a ledger of
/// deposits and transfers. Rows are generated inside SQLite (recursive CTEs), so a million
/// takes seconds; the values are consistent (balances are the ledger's sums, every send
/// numbered under its keys), so every service starts on them as on its own history.
struct HistoryPreload {
    var users = 100_000
    var sends = 1_000_000
    /// Ledger rows: a deposit pair and four transfer pairs per user.
    var ledgerRowsPerUser = 10
    var nowMilliseconds = Int64(Date().timeIntervalSince1970 * 1000)

    var ledgerRows: Int { users * ledgerRowsPerUser }

    func write(into directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try identity(Database(path: directory + "/identity.sqlite", migrations: IdentityMigrations.sqlite))
        try verification(Database(path: directory + "/verification.sqlite", migrations: VerificationSchema.sqlite))
        try accounts(Database(path: directory + "/accounts.sqlite", migrations: LedgerSchema.sqlite))
    }

    private static func numbers(_ count: Int) -> String {
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(count)) "
    }

    /// Users (one shared password hash: they never log in), three sessions each (one revoked,
    /// one expired), ten audit events each over the last 30 days, and some login throttles.
    private func identity(_ database: Database) throws {
        let hash = "$scrypt$ln=15,r=8,p=1$" + String(repeating: "A", count: 22) + "$" + String(repeating: "B", count: 43)
        let day: Int64 = 86_400
        let now = nowMilliseconds / 1000
        try database.write { c in
            try c.run(Self.numbers(users) + """
                INSERT INTO users (user_id, username, email, phone, password_hash, sms_verification, created_at)
                SELECT 'u_hist' || i, 'hist' || i, 'hist' || i || '@example.com', '+1556' || printf('%07d', i), ?, 0, ? - i FROM n
                """, [.text(hash), .integer(now - 90 * day)])
            try c.run(Self.numbers(users * 3) + """
                INSERT INTO sessions (session_id, token_hash, user_id, device_id, aal, created_at, last_seen_at, expires_at, revoked_at)
                SELECT 'se_hist' || i, randomblob(32), 'u_hist' || (i % ? + 1), 'device-' || (i % 3), 1, ? - i, ? - i,
                       CASE i % 3 WHEN 1 THEN ? - i ELSE ? END, CASE i % 3 WHEN 0 THEN ? ELSE NULL END FROM n
                """, [SQLValue(users), .integer(now - 40 * day), .integer(now - 40 * day), .integer(now - 10 * day), .integer(now + 30 * day), .integer(now - day)])
            try c.run(Self.numbers(users * 10) + """
                INSERT INTO audit_events (user_id, event, outcome, device_id, client, at)
                SELECT 'u_hist' || (i % ? + 1), 'login', 'ok', 'device-1', '203.0.113.9', ? - (i % ?) FROM n
                """, [SQLValue(users), .integer(now), .integer(30 * day)])
            try c.run(Self.numbers(users / 10) + """
                INSERT INTO login_throttle (username, failures, consecutive, last_failure_at, locked_until)
                SELECT 'hist' || i, 1, 1, ? - i, 0 FROM n
                """, [.integer(now)])
        }
    }

    /// `sends` messages over the last 7 days (the retention), each counted under its number
    /// (200,000 numbers) and the global budget, numbered as the service numbers them; a quarter
    /// of them as finished requests with their events.
    private func verification(_ database: Database) throws {
        let week: Int64 = 7 * 86_400_000
        let step = max(1, week / Int64(sends))
        let numbers = 200_000
        try database.write { c in
            try c.run(Self.numbers(sends) + """
                INSERT INTO send_log (key, seq, at)
                SELECT 'global', i, ? + i * ? FROM n
                UNION ALL
                SELECT 'number:+1556' || printf('%07d', i % ?), (i - 1) / ? + 1, ? + i * ? FROM n
                """, [.integer(nowMilliseconds - week), .integer(step), SQLValue(numbers), SQLValue(numbers), .integer(nowMilliseconds - week), .integer(step)])
            try c.run(Self.numbers(sends / 4) + """
                INSERT INTO requests (id, destination, number, user_id, purpose, workflow, step, brand, locale, code_length, code_expiry_s,
                    next_event_wait_s, code_hash, code_channel, status, failures, created_at, code_expires_at, finished_at)
                SELECT 'vr_hist' || i, 'user:u_hist' || (i % 100000 + 1) || ' +1556' || printf('%07d', i % 100000 + 1),
                    '+1556' || printf('%07d', i % 100000 + 1), 'u_hist' || (i % 100000 + 1), 'transaction', 'sms', 0, 'Bench', 'en', 6, 300, 120, randomblob(32), 'sms', 'verified', 0,
                    ? + i * ?, ? + i * ? + 300000, ? + i * ? + 20000 FROM n
                """, Array(repeating: [.integer(nowMilliseconds - week), .integer(step * 4)], count: 3).flatMap { $0 })
            try c.run(Self.numbers(sends / 2) + """
                INSERT INTO request_events (request_id, at, kind, channel) SELECT 'vr_hist' || ((i + 1) / 2), ? + i * ?,
                    CASE i % 2 WHEN 1 THEN 'sent' ELSE 'verified' END, 'sms' FROM n
                """, [.integer(nowMilliseconds - week), .integer(step * 2)])
        }
    }

    /// Per user: a deposit of 1,000.00 into checking, then four transfers of 0.01 to saving,
    /// with both ledger rows of each (balances are the ledger's sums, as the audit checks).
    private func accounts(_ database: Database) throws {
        let transfersPerUser = ledgerRowsPerUser / 2 - 1
        let deposit: Int64 = 100_000
        let start = nowMilliseconds - 30 * 86_400_000
        try database.write { c in
            try c.run(
                "INSERT INTO accounts (id, user_id, name, currency, balance, created_at) VALUES (1, '', 'external', 'EUR', ?, ?)",
                [.integer(-deposit * Int64(users)), .integer(start)])
            try c.run(Self.numbers(users) + """
                INSERT INTO accounts (id, user_id, name, currency, balance, created_at)
                SELECT 2 * i, 'u_hist' || i, 'checking', 'EUR', ? - ?, ? FROM n
                UNION ALL SELECT 2 * i + 1, 'u_hist' || i, 'saving', 'EUR', ?, ? FROM n
                """, [.integer(deposit), SQLValue(transfersPerUser), .integer(start), SQLValue(transfersPerUser), .integer(start)])
            try c.run(Self.numbers(users) + """
                INSERT INTO transfers (id, user_id, kind, from_account, to_account, amount, currency, state, idempotency_key,
                    created_at, expires_at, completed_at)
                SELECT 'tr_hist_d' || i, 'u_hist' || i, 'deposit', 'external', 'checking', ?, 'EUR', 'done', 'hist', ?, ?, ? FROM n
                """, [.integer(deposit), .integer(start), .integer(start), .integer(start)])
            try c.run(Self.numbers(users) + """
                INSERT INTO ledger (transfer_id, account_id, amount, balance_after, created_at)
                SELECT 'tr_hist_d' || i, 1, -?, -? * i, ? FROM n UNION ALL SELECT 'tr_hist_d' || i, 2 * i, ?, ?, ? FROM n
                """, [.integer(deposit), .integer(deposit), .integer(start), .integer(deposit), .integer(deposit), .integer(start)])
            try c.run(Self.numbers(users * transfersPerUser) + """
                , t(i, u, k) AS (SELECT i, (i - 1) / ? + 1, (i - 1) % ? + 1 FROM n)
                INSERT INTO transfers (id, user_id, kind, from_account, to_account, amount, currency, state, idempotency_key, request_id,
                    created_at, expires_at, completed_at)
                SELECT 'tr_hist_' || i, 'u_hist' || u, 'transfer', 'checking', 'saving', 1, 'EUR', 'done', 'hist-' || k, 'vr_hist' || i,
                    ? + i, ? + i + 300000, ? + i FROM t
                """, [SQLValue(transfersPerUser), SQLValue(transfersPerUser), .integer(start), .integer(start), .integer(start)])
            try c.run(Self.numbers(users * transfersPerUser) + """
                , t(i, u, k) AS (SELECT i, (i - 1) / ? + 1, (i - 1) % ? + 1 FROM n)
                INSERT INTO ledger (transfer_id, account_id, amount, balance_after, created_at)
                SELECT 'tr_hist_' || i, 2 * u, -1, ? - k, ? + i FROM t UNION ALL SELECT 'tr_hist_' || i, 2 * u + 1, 1, k, ? + i FROM t
                """, [SQLValue(transfersPerUser), SQLValue(transfersPerUser), .integer(deposit), .integer(start), .integer(start)])
        }
    }
}
