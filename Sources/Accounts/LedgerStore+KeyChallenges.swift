import Storage

/// A device-key transfer's challenge: bound to its transfer and device; it lives as long as the
/// transfer stays pending (single use: the transfer is booked once) and allows a few signatures.
/// The challenge is no secret (without the device's private key it signs nothing); it is kept
/// in clear because the bytes to check are rebuilt from it at confirm.
public struct KeyChallenge: Sendable, Equatable {
    public let transferID: String
    public let deviceID: String
    public let challenge: [UInt8]
    public let attemptsLeft: Int
}

public enum KeyReserveOutcome: Sendable, Equatable {
    /// Recorded now (`new`), or earlier with the same key and request (a retry): the same challenge.
    case recorded(Transfer, KeyChallenge, new: Bool)
    case insufficientFunds
    case conflict(String)
}

extension SQLLedgerStore {
    /// Migration 2: plain DDL (INTEGER/TEXT/BLOB).
    static func keyChallenge(_ c: Connection, transferID: String) throws -> KeyChallenge? {
        try c.queryOne("SELECT transfer_id, device_id, challenge, attempts_left FROM transfer_key_challenges WHERE transfer_id = ?", [.text(transferID)])
            .map { row in
                KeyChallenge(
                    transferID: try row.string("transfer_id"), deviceID: try row.string("device_id"), challenge: try row.blob("challenge"),
                    attemptsLeft: Int(try row.int("attempts_left")))
            }
    }

    public func keyChallenge(transferID: String) throws -> KeyChallenge? {
        try database.read { c in try Self.keyChallenge(c, transferID: transferID) }
    }

    /// Records a pending transfer and its challenge in one transaction (nothing to start
    /// elsewhere, so no reservation step). The same idempotency key answers what it recorded
    /// the first time, or `conflict` for a different request (another amount, account, device,
    /// or a transfer confirmed by SMS code).
    public func recordKeyConfirmedTransfer(_ request: NewTransfer, deviceID: String, challenge: [UInt8], attempts: Int) throws -> KeyReserveOutcome {
        try writer.write { c in
            if let existing = try Self.transfer(c, userID: request.userID, idempotencyKey: request.idempotencyKey) {
                guard Self.sameRequest(existing, request), let recorded = try Self.keyChallenge(c, transferID: existing.id),
                    recorded.deviceID == deviceID
                else { return .conflict("this idempotency_key was used for a different transfer") }
                return .recorded(existing, recorded, new: false)
            }
            let from = try Self.account(c, userID: request.userID, name: request.from.rawValue, currency: request.currency, now: request.now)
            guard from.balance >= request.amountMinor else { return .insufficientFunds }
            try Self.insertPendingTransfer(c, request)
            try c.run("INSERT INTO transfer_key_challenges (transfer_id, device_id, challenge, attempts_left) VALUES (?, ?, ?, ?)",
                      [.text(request.id), .text(deviceID), .blob(challenge), .integer(Int64(attempts))])
            guard let created = try Self.transfer(c, id: request.id, userID: request.userID),
                let recorded = try Self.keyChallenge(c, transferID: request.id)
            else { throw StorageError.misuse("inserted transfer not found") }
            return .recorded(created, recorded, new: true)
        }
    }

    /// Spends one signature attempt, for a signature that did not verify. The attempts left
    /// after this one; nil when none was left (wrong signatures at once spend no more).
    public func spendKeyAttempt(transferID: String) throws -> Int? {
        try writer.write { c in
            let changed = try c.run(
                "UPDATE transfer_key_challenges SET attempts_left = attempts_left - 1 WHERE transfer_id = ? AND attempts_left > 0",
                [.text(transferID)])
            guard changed == 1 else { return nil }
            return try Self.keyChallenge(c, transferID: transferID)?.attemptsLeft
        }
    }
}
