import LineProtocol
import Storage

/// The invariants of the ledger, checked on one read snapshot (`accounts.audit`). Sums are cast
/// to BIGINT: PostgreSQL widens SUM of BIGINT to NUMERIC, SQLite keeps INTEGER.
extension SQLLedgerStore {
    /// Every breach found (at most `maxBreaches`), on one consistent snapshot.
    public func audit(maxBreaches: Int) throws -> [Breach] {
        precondition(maxBreaches > 0)
        return try database.read { c in
            var breaches: [Breach] = []
            breaches += try Self.unbalancedPairs(c, limit: maxBreaches)
            breaches += try Self.balanceMismatches(c, limit: maxBreaches)
            breaches += try Self.negativeBalances(c, limit: maxBreaches)
            breaches += try Self.stateLedgerMismatches(c, limit: maxBreaches)
            let total = try c.queryOne("SELECT CAST(COALESCE(SUM(balance), 0) AS BIGINT) AS total FROM accounts")?.int("total") ?? 0
            if total != 0 { breaches.append(Breach(kind: "sum_not_conserved", detail: ["total": .int(total)])) }
            return Array(breaches.prefix(maxBreaches))
        }
    }

    /// Every transfer's ledger rows are exactly two and sum to zero.
    static func unbalancedPairs(_ c: Connection, limit: Int) throws -> [Breach] {
        try c.query("""
            SELECT transfer_id, CAST(SUM(amount) AS BIGINT) AS total, COUNT(*) AS legs FROM ledger
            GROUP BY transfer_id HAVING SUM(amount) <> 0 OR COUNT(*) <> 2 LIMIT ?
            """, [SQLValue(limit)]
        ).map { row in
            Breach(kind: "unbalanced_pair", detail: [
                "transfer_id": .string(try row.string("transfer_id")), "sum": .int(try row.int("total")),
                "legs": .int(try row.int("legs")),
            ])
        }
    }

    /// Every balance equals the sum of its ledger rows.
    static func balanceMismatches(_ c: Connection, limit: Int) throws -> [Breach] {
        try c.query("""
            SELECT a.user_id, a.name, a.balance, CAST(COALESCE(SUM(l.amount), 0) AS BIGINT) AS ledger_sum
            FROM accounts a LEFT JOIN ledger l ON l.account_id = a.id
            GROUP BY a.id, a.user_id, a.name, a.balance
            HAVING a.balance <> COALESCE(SUM(l.amount), 0) LIMIT ?
            """, [SQLValue(limit)]
        ).map { row in
            Breach(kind: "balance_mismatch", detail: [
                "user_id": .string(try row.string("user_id")), "account": .string(try row.string("name")),
                "balance": .int(try row.int("balance")), "ledger_sum": .int(try row.int("ledger_sum")),
            ])
        }
    }

    /// No user's balance is below zero (only `external` may be).
    static func negativeBalances(_ c: Connection, limit: Int) throws -> [Breach] {
        try c.query(
            "SELECT user_id, name, balance FROM accounts WHERE balance < 0 AND name <> 'external' LIMIT ?", [SQLValue(limit)]
        ).map { row in
            Breach(kind: "negative_balance", detail: [
                "user_id": .string(try row.string("user_id")), "account": .string(try row.string("name")),
                "balance": .int(try row.int("balance")),
            ])
        }
    }

    /// A transfer has ledger rows if and only if it is `done`.
    static func stateLedgerMismatches(_ c: Connection, limit: Int) throws -> [Breach] {
        try c.query("""
            SELECT t.id, t.state FROM transfers t
            WHERE (t.state = 'done') <> EXISTS (SELECT 1 FROM ledger l WHERE l.transfer_id = t.id) LIMIT ?
            """, [SQLValue(limit)]
        ).map { row in
            Breach(kind: "state_ledger_mismatch", detail: [
                "transfer_id": .string(try row.string("id")), "state": .string(try row.string("state")),
            ])
        }
    }
}
