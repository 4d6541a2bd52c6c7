import FoundationEssentials
import LineProtocol
import Storage

/// Everything the accounts service keeps, behind one seam. Each method is one transaction.
/// `SQLLedgerStore` below uses SQL that SQLite and PostgreSQL share (bound parameters,
/// SAVEPOINT, no UPSERT or RETURNING); only the migrations are written per dialect.
public protocol LedgerStore: Sendable {
    func balances(userID: String) throws -> [AccountBalance]
    func existingTransfer(userID: String, idempotencyKey: String) throws -> Transfer?
    func reserveTransfer(_ request: NewTransfer, staleBefore: Int64) throws -> ReserveOutcome
    func attachCode(transferID: String, userID: String, requestID: String) throws -> Transfer?
    func releaseReservation(transferID: String) throws
    func transfer(id: String, userID: String) throws -> Transfer?
    func markExpired(transferID: String) throws
    func cancel(transferID: String) throws
    func pendingTransfer(userID: String, requestID: String) throws -> Transfer?
    /// `whileKeyAttemptsLeft`: a device-key transfer books only while its challenge has attempts left.
    func complete(transferID: String, userID: String, now: Int64, whileKeyAttemptsLeft: Bool) throws -> CompleteOutcome
    func deposit(_ request: NewDeposit) throws -> DepositOutcome
    // A deleted user's accounts (LedgerStore+Closing.swift).
    func closeUser(userID: String, pseudonym: String, now: Int64) throws -> CloseOutcome
    func payOut(_ request: NewPayOut) throws -> PayOutOutcome
    func transfersForExport(userID: String, limit: Int) throws -> [JSON]
    func history(userID: String, limit: Int, beforeLedgerID: Int64?) throws -> [HistoryEntry]
    func audit(maxBreaches: Int) throws -> [Breach]
    // Transfers confirmed by a device key (LedgerStore+KeyChallenges.swift).
    func recordKeyConfirmedTransfer(_ request: NewTransfer, deviceID: String, challenge: [UInt8], attempts: Int) throws -> KeyReserveOutcome
    func keyChallenge(transferID: String) throws -> KeyChallenge?
    func spendKeyAttempt(transferID: String) throws -> Int?
}

public struct NewTransfer: Sendable {
    public let id: String
    public let userID: String
    public let from: AccountName
    public let to: AccountName
    public let amountMinor: Int64
    public let currency: String
    public let idempotencyKey: String
    public let now: Int64
    public let expiresAt: Int64

    var verificationPayload: [String: JSON] {
        Transfer.verificationPayload(id: id, from: from.rawValue, to: to.rawValue, amountMinor: amountMinor, currency: currency)
    }
}

/// What one atomic look at an idempotency key decides. Exactly one caller per key holds the
/// reservation at a time, so twins never start a second code nor supersede their own transfer.
public enum ReserveOutcome: Sendable, Equatable {
    /// This caller holds the key: a pending transfer without a code yet. Start its code, then
    /// `attachCode` (or `releaseReservation` if the code could not be started).
    case reserved(Transfer)
    /// Same key, same request, recorded with its code: what a retry or a twin answers.
    case existing(Transfer)
    /// Same key, same request, its code still being started by a twin: ask again shortly.
    case starting
    case insufficientFunds
    /// Same key, a different request.
    case conflict(String)
}

public enum CompleteOutcome: Sendable, Equatable {
    /// Booked now, or already booked before (a repeated or concurrent confirm): the balances after.
    case done([AccountBalance])
    case insufficientFunds
    case expired
    case notFound
    /// Still pending, but wrong signatures spent every attempt of its device-key challenge.
    case keyAttemptsSpent
    /// Not pending any more (`failed`), so nothing moved.
    case notPending(TransferState)
}

public struct NewDeposit: Sendable {
    public let id: String
    public let userID: String
    public let account: AccountName
    public let amountMinor: Int64
    public let currency: String
    public let idempotencyKey: String
    public let now: Int64
    public let maxBalanceMinor: Int64
}

public enum DepositOutcome: Sendable, Equatable {
    /// The account's balance right after this deposit (the same on a repeat with the same key).
    case balance(Int64)
    case conflict(String)
    case balanceTooLarge
}

/// The ledger in a SQL database: the embedded SQLite file (WAL, `synchronous=FULL`, writes
/// grouped by `GroupCommitter`), or the `accounts` schema on PostgreSQL shared by every replica
/// (each write its own SERIALIZABLE transaction). The statements are the same on both; every
/// read-then-write (idempotency keys, funds, the pending-to-done flip) sits in one transaction,
/// which SQLite serializes and PostgreSQL retries on conflict, so money stays exact across replicas.
public final class SQLLedgerStore: LedgerStore, @unchecked Sendable {
    public let database: any SQLDatabase
    let writer: any SQLWriter

    /// `groupCommitMax` 1 turns grouping off; PostgreSQL never groups.
    public init(database: any SQLDatabase, groupCommitMax: Int = 64) {
        self.database = database
        writer = makeSQLWriter(for: database, groupCommitMax: groupCommitMax)
    }

    /// The embedded default: the SQLite file at `path`, created and migrated.
    public convenience init(path: String, groupCommitMax: Int = 64, readerCount: Int = 4) throws {
        let database = try Database(
            path: path, options: DatabaseOptions(synchronous: .full, readerCount: readerCount), migrations: LedgerSchema.sqlite)
        self.init(database: database, groupCommitMax: groupCommitMax)
    }

    /// (transactions, writes) committed so far, for metrics.
    public var groupCommitStatistics: (batches: Int, jobs: Int) { writer.statistics }

    // MARK: Reads

    public func balances(userID: String) throws -> [AccountBalance] {
        try database.read { c in try Self.balances(c, userID: userID) }
    }

    /// Both accounts, in the order `checking`, `saving`; one not yet created reads as zero.
    static func balances(_ c: Connection, userID: String, currency fallback: String? = nil) throws -> [AccountBalance] {
        let rows = try c.query("SELECT name, balance, currency FROM accounts WHERE user_id = ?", [.text(userID)])
        var byName: [String: AccountBalance] = [:]
        for row in rows {
            let name = try row.string("name")
            byName[name] = AccountBalance(name: name, balanceMinor: try row.int("balance"), currency: try row.string("currency"))
        }
        let currency = fallback ?? byName.values.first?.currency ?? ""
        return AccountName.allCases.map { name in
            byName[name.rawValue] ?? AccountBalance(name: name.rawValue, balanceMinor: 0, currency: currency)
        }
    }

    public func transfer(id: String, userID: String) throws -> Transfer? {
        try database.read { c in try Self.transfer(c, id: id, userID: userID) }
    }

    static let transferColumns = """
        id, user_id, from_account, to_account, amount, currency, state, idempotency_key, request_id, created_at, expires_at
        """
    // Built once: an SQL text made for each call costs its building and a lookup by contents.
    static let transferByID = "SELECT \(transferColumns) FROM transfers WHERE id = ? AND user_id = ? AND kind = 'transfer'"
    static let transferByKey = "SELECT \(transferColumns) FROM transfers WHERE user_id = ? AND kind = 'transfer' AND idempotency_key = ?"
    static let pendingTransferByRequest = """
        SELECT \(transferColumns) FROM transfers
        WHERE user_id = ? AND request_id = ? AND kind = 'transfer' AND state = 'pending'
        """

    /// A pending transfer with no code yet (`request_id` NULL): what both confirmations start from.
    static func insertPendingTransfer(_ c: Connection, _ request: NewTransfer) throws {
        try c.run("""
            INSERT INTO transfers (id, user_id, kind, from_account, to_account, amount, currency, state,
                                   idempotency_key, request_id, created_at, expires_at, completed_at)
            VALUES (?, ?, 'transfer', ?, ?, ?, ?, 'pending', ?, NULL, ?, ?, NULL)
            """, [
                .text(request.id), .text(request.userID), .text(request.from.rawValue), .text(request.to.rawValue),
                .integer(request.amountMinor), .text(request.currency), .text(request.idempotencyKey),
                .integer(request.now), .integer(request.expiresAt),
            ])
    }

    static func transfer(_ c: Connection, id: String, userID: String) throws -> Transfer? {
        try c.queryOne(
            transferByID,
            [.text(id), .text(userID)]
        ).map(decodeTransfer)
    }

    static func decodeTransfer(_ row: Row) throws -> Transfer {
        guard let state = TransferState(rawValue: try row.string("state")) else {
            throw StorageError.column("transfers.state holds an unknown state")
        }
        return Transfer(
            id: try row.string("id"), userID: try row.string("user_id"), from: try row.string("from_account"),
            to: try row.string("to_account"), amountMinor: try row.int("amount"), currency: try row.string("currency"),
            state: state, idempotencyKey: try row.string("idempotency_key"), requestID: try row.optionalString("request_id"),
            createdAt: try row.int("created_at"), expiresAt: try row.int("expires_at"))
    }

    /// The user's newest ledger rows before `beforeLedgerID`. Each account's rows are read
    /// newest first along its index and only `limit` of them, then merged: a page costs the
    /// same however long the user's history (one query over both accounts would sort it all).
    public func history(userID: String, limit: Int, beforeLedgerID: Int64?) throws -> [HistoryEntry] {
        precondition(limit > 0)
        return try database.read { c in
            let accounts = try c.query("SELECT id FROM accounts WHERE user_id = ?", [.text(userID)])
            var entries: [HistoryEntry] = []
            for account in accounts {
                entries += try Self.history(c, accountID: try account.int("id"), limit: limit, beforeLedgerID: beforeLedgerID)
            }
            return Array(entries.sorted { $0.ledgerID > $1.ledgerID }.prefix(limit))
        }
    }

    private static func history(_ c: Connection, accountID: Int64, limit: Int, beforeLedgerID: Int64?) throws -> [HistoryEntry] {
        let rows = try c.query("""
            SELECT l.id, l.transfer_id, l.amount, l.balance_after, l.created_at,
                   a.name AS account, a.currency, c.name AS counterpart
            FROM ledger l
            JOIN accounts a ON a.id = l.account_id
            JOIN ledger lc ON lc.transfer_id = l.transfer_id AND lc.account_id <> l.account_id
            JOIN accounts c ON c.id = lc.account_id
            WHERE l.account_id = ? AND l.id < ?
            ORDER BY l.id DESC
            LIMIT ?
            """, [.integer(accountID), .integer(beforeLedgerID ?? Int64.max), SQLValue(limit)])
        return try rows.map { row in
            let amount = try row.int("amount")
            return HistoryEntry(
                ledgerID: try row.int("id"), transferID: try row.string("transfer_id"), account: try row.string("account"),
                counterpart: try row.string("counterpart"), amountMinor: abs(amount),
                direction: amount < 0 ? "debit" : "credit", balanceAfterMinor: try row.int("balance_after"),
                currency: try row.string("currency"), at: try row.int("created_at"))
        }
    }

    // MARK: Writes

    public func existingTransfer(userID: String, idempotencyKey: String) throws -> Transfer? {
        try database.read { c in try Self.transfer(c, userID: userID, idempotencyKey: idempotencyKey) }
    }

    static func transfer(_ c: Connection, userID: String, idempotencyKey: String) throws -> Transfer? {
        try c.queryOne(
            transferByKey,
            [.text(userID), .text(idempotencyKey)]
        ).map(decodeTransfer)
    }

    /// Claims the key in one transaction (the writer lock makes it atomic across threads; the
    /// unique key backs it): records a pending transfer without a code, or answers what is there.
    /// A reservation older than `staleBefore` whose code never came (its process died between the
    /// two steps) is taken over, with fresh times, by the caller.
    /// Not durable on its own: nobody is told of a reservation, and `attachCode` (durable, same
    /// file, later in the WAL) makes it durable before the transfer is answered. One lost to a
    /// power cut in between is what a crash in between leaves today: a code no transfer names.
    public func reserveTransfer(_ request: NewTransfer, staleBefore: Int64) throws -> ReserveOutcome {
        try writer.write(durable: false) { c in
            if let existing = try Self.transfer(c, userID: request.userID, idempotencyKey: request.idempotencyKey) {
                guard Self.sameRequest(existing, request) else { return .conflict("this idempotency_key was used for a different transfer") }
                guard existing.requestID == nil, existing.state == .pending else { return .existing(existing) }
                // Recorded for a device key: no code will ever come, and none may be started for it.
                if try Self.keyChallenge(c, transferID: existing.id) != nil {
                    return .conflict("this idempotency_key was used for a different transfer")
                }
                guard existing.createdAt < staleBefore else { return .starting }
                try c.run(
                    "UPDATE transfers SET created_at = ?, expires_at = ? WHERE id = ? AND request_id IS NULL AND state = 'pending'",
                    [.integer(request.now), .integer(request.expiresAt), .text(existing.id)])
                guard let taken = try Self.transfer(c, id: existing.id, userID: request.userID) else {
                    throw StorageError.misuse("reserved transfer not found")
                }
                return .reserved(taken)
            }
            let from = try Self.account(c, userID: request.userID, name: request.from.rawValue, currency: request.currency, now: request.now)
            guard from.balance >= request.amountMinor else { return .insufficientFunds }
            try Self.insertPendingTransfer(c, request)
            guard let created = try Self.transfer(c, id: request.id, userID: request.userID) else {
                throw StorageError.misuse("inserted transfer not found")
            }
            return .reserved(created)
        }
    }

    /// Binds the started code to the reserved transfer. Nil when it is no longer a reservation
    /// (a retry took a stale one over and attached its own code first).
    public func attachCode(transferID: String, userID: String, requestID: String) throws -> Transfer? {
        try writer.write { c in
            let changed = try c.run(
                "UPDATE transfers SET request_id = ? WHERE id = ? AND user_id = ? AND request_id IS NULL AND state = 'pending'",
                [.text(requestID), .text(transferID), .text(userID)])
            return changed == 1 ? try Self.transfer(c, id: transferID, userID: userID) : nil
        }
    }

    /// Forgets a reservation whose code could not be started, so the same key can start over.
    public func releaseReservation(transferID: String) throws {
        try writer.write { c in
            try c.run(
                "DELETE FROM transfers WHERE id = ? AND kind = 'transfer' AND request_id IS NULL AND state = 'pending'",
                [.text(transferID)])
        }
    }

    /// Same accounts, amount and currency: a retry of the same request.
    public static func sameRequest(_ existing: Transfer, _ request: NewTransfer) -> Bool {
        existing.from == request.from.rawValue && existing.to == request.to.rawValue
            && existing.amountMinor == request.amountMinor && existing.currency == request.currency
    }

    public func cancel(transferID: String) throws {
        try writer.write { c in
            try c.run("UPDATE transfers SET state = 'cancelled' WHERE id = ? AND state = 'pending'", [.text(transferID)])
        }
    }

    public func pendingTransfer(userID: String, requestID: String) throws -> Transfer? {
        try database.read { c in
            try c.queryOne(Self.pendingTransferByRequest, [.text(userID), .text(requestID)]
            ).map(Self.decodeTransfer)
        }
    }

    public func markExpired(transferID: String) throws {
        try writer.write { c in
            try c.run("UPDATE transfers SET state = 'expired' WHERE id = ? AND state = 'pending'", [.text(transferID)])
        }
    }

    /// The heart of the service: in one transaction, re-check funds, flip the transfer from
    /// pending to done (guarded, so it happens once), move both balances and write the
    /// double-entry pair. Either all of it commits or none of it.
    public func complete(transferID: String, userID: String, now: Int64, whileKeyAttemptsLeft: Bool = false) throws -> CompleteOutcome {
        try writer.write { c in
            guard let transfer = try Self.transfer(c, id: transferID, userID: userID) else { return .notFound }
            switch transfer.state {
            case .done: return .done(try Self.balances(c, userID: userID))
            case .expired: return .expired
            case .failed, .cancelled: return .notPending(transfer.state)
            case .pending: break
            }
            if whileKeyAttemptsLeft, (try Self.keyChallenge(c, transferID: transferID)?.attemptsLeft ?? 0) == 0 { return .keyAttemptsSpent }
            if now >= transfer.expiresAt {
                try c.run("UPDATE transfers SET state = 'expired' WHERE id = ? AND state = 'pending'", [.text(transferID)])
                return .expired
            }
            let from = try Self.account(c, userID: userID, name: transfer.from, currency: transfer.currency, now: now)
            let to = try Self.account(c, userID: userID, name: transfer.to, currency: transfer.currency, now: now)
            guard from.balance >= transfer.amountMinor else {
                try c.run("UPDATE transfers SET state = 'failed', completed_at = ? WHERE id = ? AND state = 'pending'",
                          [.integer(now), .text(transferID)])
                return .insufficientFunds
            }
            let flipped = try c.run(
                "UPDATE transfers SET state = 'done', completed_at = ? WHERE id = ? AND state = 'pending'",
                [.integer(now), .text(transferID)])
            guard flipped == 1 else { throw StorageError.misuse("transfer changed state inside its own transaction") }
            try Self.book(c, transferID: transferID, debit: from, credit: to, amountMinor: transfer.amountMinor, now: now)
            return .done(try Self.balances(c, userID: userID))
        }
    }

    public func deposit(_ request: NewDeposit) throws -> DepositOutcome {
        try writer.write { c in
            if let row = try c.queryOne("""
                SELECT id, to_account, amount, currency FROM transfers
                WHERE user_id = ? AND kind = 'deposit' AND idempotency_key = ?
                """, [.text(request.userID), .text(request.idempotencyKey)])
            {
                guard try row.string("to_account") == request.account.rawValue, try row.int("amount") == request.amountMinor,
                    try row.string("currency") == request.currency
                else { return .conflict("this idempotency_key was used for a different deposit") }
                let after = try c.queryOne("""
                    SELECT l.balance_after FROM ledger l JOIN accounts a ON a.id = l.account_id
                    WHERE l.transfer_id = ? AND a.user_id = ?
                    """, [.text(try row.string("id")), .text(request.userID)])
                return .balance(try after?.int("balance_after") ?? 0)
            }
            guard try !Self.isClosed(c, userID: request.userID) else { return .conflict("this user's accounts are closed") }
            let external = try Self.account(c, userID: "", name: AccountName.external, currency: request.currency, now: request.now)
            let target = try Self.account(c, userID: request.userID, name: request.account.rawValue, currency: request.currency, now: request.now)
            guard target.balance <= request.maxBalanceMinor - request.amountMinor,
                external.balance >= -request.maxBalanceMinor + request.amountMinor
            else { return .balanceTooLarge }
            try c.run("""
                INSERT INTO transfers (id, user_id, kind, from_account, to_account, amount, currency, state,
                                       idempotency_key, request_id, created_at, expires_at, completed_at)
                VALUES (?, ?, 'deposit', 'external', ?, ?, ?, 'done', ?, NULL, ?, ?, ?)
                """, [
                    .text(request.id), .text(request.userID), .text(request.account.rawValue), .integer(request.amountMinor),
                    .text(request.currency), .text(request.idempotencyKey), .integer(request.now), .integer(request.now),
                    .integer(request.now),
                ])
            try Self.book(c, transferID: request.id, debit: external, credit: target, amountMinor: request.amountMinor, now: request.now)
            return .balance(target.balance + request.amountMinor)
        }
    }

    struct AccountRow {
        let id: Int64
        let balance: Int64
    }

    /// The account, created (empty) on first use.
    static func account(_ c: Connection, userID: String, name: String, currency: String, now: Int64) throws -> AccountRow {
        let select = "SELECT id, balance FROM accounts WHERE user_id = ? AND name = ?"
        if let row = try c.queryOne(select, [.text(userID), .text(name)]) {
            return AccountRow(id: try row.int("id"), balance: try row.int("balance"))
        }
        try c.run(
            "INSERT INTO accounts (user_id, name, currency, balance, created_at) VALUES (?, ?, ?, 0, ?)",
            [.text(userID), .text(name), .text(currency), .integer(now)])
        guard let row = try c.queryOne(select, [.text(userID), .text(name)]) else {
            throw StorageError.misuse("inserted account not found")
        }
        return AccountRow(id: try row.int("id"), balance: try row.int("balance"))
    }

    /// Moves `amountMinor` from `debit` to `credit`: both balances (each guarded by the balance
    /// just read, so a concurrent change would fail loudly rather than be lost) and the ledger pair.
    static func book(_ c: Connection, transferID: String, debit: AccountRow, credit: AccountRow, amountMinor: Int64, now: Int64) throws {
        precondition(amountMinor > 0 && debit.id != credit.id)
        let debitAfter = debit.balance - amountMinor
        let creditAfter = credit.balance + amountMinor
        for (account, after) in [(debit, debitAfter), (credit, creditAfter)] {
            let changed = try c.run(
                "UPDATE accounts SET balance = ? WHERE id = ? AND balance = ?",
                [.integer(after), .integer(account.id), .integer(account.balance)])
            guard changed == 1 else { throw StorageError.misuse("account balance changed under the writer") }
        }
        let insert = """
            INSERT INTO ledger (transfer_id, account_id, amount, balance_after, created_at) VALUES (?, ?, ?, ?, ?)
            """
        try c.run(insert, [.text(transferID), .integer(debit.id), .integer(-amountMinor), .integer(debitAfter), .integer(now)])
        try c.run(insert, [.text(transferID), .integer(credit.id), .integer(amountMinor), .integer(creditAfter), .integer(now)])
    }
}
