import LineProtocol
import Storage

extension SQLLedgerStore {
    /// The user's transfers and deposits, newest first, at most `limit`: the export's list.
    public func transfersForExport(userID: String, limit: Int) throws -> [JSON] {
        try database.read { c in
            try c.query("""
                SELECT id, kind, from_account, to_account, amount, currency, state, created_at, completed_at FROM transfers
                WHERE user_id = ? ORDER BY created_at DESC, id DESC LIMIT ?
                """, [.text(userID), SQLValue(limit)]
            ).map { row -> JSON in
                [
                    "transfer_id": .string(try row.string("id")), "kind": .string(try row.string("kind")),
                    "from": .string(try row.string("from_account")), "to": .string(try row.string("to_account")),
                    "amount": .int(try row.int("amount")), "currency": .string(try row.string("currency")),
                    "state": .string(try row.string("state")), "created_at": .int(try row.int("created_at")),
                    "completed_at": try row.optionalInt("completed_at").map(JSON.int) ?? .null,
                ]
            }
        }
    }
}
