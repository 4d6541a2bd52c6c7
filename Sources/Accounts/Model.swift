import Contract
import LineProtocol
import RPC
import Secrets

/// The two accounts every user has. `external` is the ledger's counterpart for money
/// entering from outside (deposits); it belongs to no user and is never named by clients.
public enum AccountName: String, Sendable, CaseIterable {
    case checking
    case saving

    static let external = "external"
}

/// Where a transfer is in its life. `pending` -> `done` (confirmed and booked),
/// `expired` (its code expired first), `failed` (the code was right but funds no longer
/// sufficed) or `cancelled` (a newer transfer of the same user replaced it and its code).
public enum TransferState: String, Sendable {
    case pending, done, expired, failed, cancelled
}

/// The limits and settings of the service, each with its unit in the name.
public struct AccountsSettings: Sendable {
    /// ISO 4217 code of every account (one currency per deployment).
    public var currency = "USD"
    /// Largest amount of one transfer or deposit, in minor units (1,000,000.00).
    public var maxAmountMinor: Int64 = 100_000_000
    /// No balance may grow past this, in minor units, so sums never overflow.
    public var maxBalanceMinor: Int64 = 1_000_000_000_000_000
    /// A pending transfer (and its code) lives this long.
    public var transferExpirySeconds: Int64 = 300
    /// What `transferExpirySeconds` may be: the transfer's SMS code lives as long as the
    /// transfer, and verification gives a code only a life in this range.
    public static let transferExpiryRange = Int(VerificationContract.codeLifetimeSeconds.lowerBound)...Int(VerificationContract.codeLifetimeSeconds.upperBound)
    /// A twin (same idempotency key) waits this long for the first request to start the code.
    public var twinWaitMilliseconds: Int64 = 5_000
    /// A reservation whose code has not come after this long belongs to a request that died
    /// (kill -9 between the two steps): a retry with the same key takes it over.
    public var codeStartTimeoutSeconds: Int64 = 30
    /// Longest idempotency key, in bytes.
    public var maxIdempotencyKeyBytes = 128
    /// History page size: default and maximum.
    public var historyDefaultLimit = 20
    public var historyMaxLimit = 100
    /// Signatures a device-key transfer accepts before it can no longer be confirmed.
    public var keyConfirmAttempts = 3
    /// The service's name inside the bytes a device key signs (`--brand`).
    public var brand = "Latchkey"
    /// Accounts' own key (`--accounts-key`, else `<data dir>/accounts.key`): seals history
    /// cursors. Random per process unless configured (tests).
    public var serverKey: [UInt8] = SecureRandom.bytes(32)

    public init() {}
}

/// One row of `transfers`, as the service sees it.
public struct Transfer: Sendable, Equatable {
    public let id: String
    public let userID: String
    public let from: String
    public let to: String
    public let amountMinor: Int64
    public let currency: String
    public let state: TransferState
    public let idempotencyKey: String
    public let requestID: String?
    public let createdAt: Int64
    public let expiresAt: Int64

    /// What the verification code is bound to (PSD2 dynamic linking). Start and check send the
    /// very same object, so a code for one transfer can never confirm another.
    public var verificationPayload: [String: JSON] {
        Self.verificationPayload(id: id, from: from, to: to, amountMinor: amountMinor, currency: currency)
    }

    static func verificationPayload(id: String, from: String, to: String, amountMinor: Int64, currency: String) -> [String: JSON] {
        [
            "amount": .int(amountMinor), "currency": .string(currency),
            "from": .string(from), "to": .string(to), "transfer_id": .string(id),
        ]
    }
}

public struct AccountBalance: Sendable, Equatable {
    public let name: String
    public let balanceMinor: Int64
    public let currency: String

    public var json: JSON { ["name": .string(name), "balance": .int(balanceMinor), "currency": .string(currency)] }
}

/// One ledger row seen from its account: money out is a `debit`, money in a `credit`.
public struct HistoryEntry: Sendable, Equatable {
    public let ledgerID: Int64
    public let transferID: String
    public let account: String
    public let counterpart: String
    public let amountMinor: Int64
    public let direction: String
    public let balanceAfterMinor: Int64
    public let currency: String
    public let at: Int64

    /// What moved the money: a transfer between the user's accounts, or a deposit from outside.
    public enum Kind: String, Sendable {
        case transfer, deposit
    }

    /// Told by the booking's id: deposits are `dp_...`, transfers `tr_...`.
    public var kind: Kind { transferID.hasPrefix("dp_") ? .deposit : .transfer }

    /// `entry_id` names the booking whatever its kind; `transfer_id` (the id `accounts.transfer`
    /// gave) appears on transfers only, so a deposit is never mistaken for one.
    public var json: JSON {
        var members: [String: JSON] = [
            "entry_id": .string(transferID), "kind": .string(kind.rawValue), "account": .string(account),
            "counterpart": .string(counterpart), "amount": .int(amountMinor), "direction": .string(direction),
            "balance_after": .int(balanceAfterMinor), "currency": .string(currency), "at": .int(at),
        ]
        if kind == .transfer { members["transfer_id"] = .string(transferID) }
        return .object(members)
    }
}

public struct HistoryPage: Sendable, Equatable {
    public let entries: [HistoryEntry]
    /// Pass as `before` for the next (older) page; nil on the last page.
    public let next: String?
}

/// One broken invariant found by the audit.
public struct Breach: Sendable, Equatable {
    public let kind: String
    public let detail: [String: JSON]

    public var json: JSON {
        var members = detail
        members["kind"] = .string(kind)
        return .object(members)
    }
}

/// The service's domain errors, mapped to wire reasons in one place.
public enum AccountsError: Error, Sendable, Equatable, RPCErrorConvertible {
    case invalidParams(field: String, message: String)
    case insufficientFunds
    case notFound
    case conflict(String)
    case expired
    /// A device-key signature that does not verify over this transfer's bytes.
    case invalidSignature(attemptsLeft: Int)
    case tooManyAttempts

    public var rpcError: RPCError {
        switch self {
        case .invalidParams(let field, let message): RPCError.invalidParams(message, field: field)
        case .insufficientFunds: RPCError(.insufficientFunds, "the account does not hold enough money")
        case .notFound: RPCError(.notFound, "no such transfer")
        case .conflict(let message): RPCError(.conflict, message)
        case .expired: RPCError(.expired, "the transfer expired with its code; start a new one")
        case .invalidSignature(let attemptsLeft):
            RPCError(.invalidCode, "the signature does not match this transfer", extra: ["attempts_left": .int(Int64(attemptsLeft))])
        case .tooManyAttempts: RPCError(.tooManyAttempts, "too many wrong signatures; start a new transfer")
        }
    }
}
