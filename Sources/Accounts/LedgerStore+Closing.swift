import FoundationEssentials
import LineProtocol
import Secrets
import Storage

/// What closing a deleted user's accounts decided.
public enum CloseOutcome: Sendable, Equatable {
    /// Closed now, or before (a repeated report).
    case closed
    /// Money is left: nothing changed. The balances as they stand.
    case balanceNotZero([AccountBalance])
}

/// A pay-out: money leaving a user's account for outside (paid to the user by other means, so
/// that a deletion blocked by a balance can go on).
public struct NewPayOut: Sendable {
    public let id: String
    public let userID: String
    public let account: AccountName
    public let amountMinor: Int64
    public let currency: String
    public let idempotencyKey: String
    public let now: Int64
}

public enum PayOutOutcome: Sendable, Equatable {
    /// The account's balance right after this pay-out (the same on a repeat with the same key).
    case balance(Int64)
    case conflict(String)
    case insufficientFunds
}

extension SQLLedgerStore {
    /// Closes the user's accounts when both are empty: pending transfers are cancelled, and the
    /// accounts with every transfer of theirs pass to `pseudonym` in one transaction, so the
    /// ledger the law makes us keep stays whole and balanced but names no user id any more.
    /// Only a hash of the user id is kept, to know a repeated close and to refuse new money.
    public func closeUser(userID: String, pseudonym: String, now: Int64) throws -> CloseOutcome {
        try writer.write { c in
            let key = Self.closedKey(userID)
            if try c.queryOne("SELECT 1 AS one FROM closed_users WHERE user_hash = ?", [.text(key)]) != nil { return .closed }
            let balances = try Self.balances(c, userID: userID)
            guard balances.allSatisfy({ $0.balanceMinor == 0 }) else { return .balanceNotZero(balances) }
            _ = try c.run("UPDATE transfers SET state = 'cancelled' WHERE user_id = ? AND state = 'pending'", [.text(userID)])
            _ = try c.run("UPDATE accounts SET user_id = ? WHERE user_id = ?", [.text(pseudonym), .text(userID)])
            _ = try c.run("UPDATE transfers SET user_id = ? WHERE user_id = ?", [.text(pseudonym), .text(userID)])
            _ = try c.run(
                "INSERT INTO closed_users (user_hash, pseudonym, closed_at) VALUES (?, ?, ?)", [.text(key), .text(pseudonym), .integer(now)])
            return .closed
        }
    }

    /// Whether the user's accounts were closed (a deleted user): no money goes in or out any more.
    static func isClosed(_ c: Connection, userID: String) throws -> Bool {
        try c.queryOne("SELECT 1 AS one FROM closed_users WHERE user_hash = ?", [.text(closedKey(userID))]) != nil
    }

    static func closedKey(_ userID: String) -> String {
        Hex.encode(SHA256.hash(userID))
    }

    /// Books a pay-out to the outside account, once per idempotency key. It is a transfer to
    /// `external` in the ledger; its key lives apart from the user's own transfer keys.
    public func payOut(_ request: NewPayOut) throws -> PayOutOutcome {
        try writer.write { c in
            let key = "pay-out " + request.idempotencyKey
            if let existing = try Self.transfer(c, userID: request.userID, idempotencyKey: key) {
                guard existing.from == request.account.rawValue, existing.amountMinor == request.amountMinor else {
                    return .conflict("this idempotency_key was used for a different pay-out")
                }
                let after = try c.queryOne("""
                    SELECT l.balance_after FROM ledger l JOIN accounts a ON a.id = l.account_id
                    WHERE l.transfer_id = ? AND a.user_id = ?
                    """, [.text(existing.id), .text(request.userID)])
                return .balance(try after?.int("balance_after") ?? 0)
            }
            guard try !Self.isClosed(c, userID: request.userID) else { return .conflict("this user's accounts are closed") }
            let source = try Self.account(c, userID: request.userID, name: request.account.rawValue, currency: request.currency, now: request.now)
            guard source.balance >= request.amountMinor else { return .insufficientFunds }
            let external = try Self.account(c, userID: "", name: AccountName.external, currency: request.currency, now: request.now)
            try c.run("""
                INSERT INTO transfers (id, user_id, kind, from_account, to_account, amount, currency, state,
                                       idempotency_key, request_id, created_at, expires_at, completed_at)
                VALUES (?, ?, 'transfer', ?, 'external', ?, ?, 'done', ?, NULL, ?, ?, ?)
                """, [
                    .text(request.id), .text(request.userID), .text(request.account.rawValue), .integer(request.amountMinor),
                    .text(request.currency), .text(key), .integer(request.now), .integer(request.now), .integer(request.now),
                ])
            try Self.book(c, transferID: request.id, debit: source, credit: external, amountMinor: request.amountMinor, now: request.now)
            return .balance(source.balance - request.amountMinor)
        }
    }
}
