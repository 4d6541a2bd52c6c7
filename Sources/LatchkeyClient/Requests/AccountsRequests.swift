import Foundation

extension LatchkeyClient {
    /// `accounts.*`: balances, transfers confirmed by a code, history (`protocol/accounts.md`).
    public enum Accounts: Sendable {
        public struct Ping: LatchkeyRequest, WireKeyed {
            public typealias Response = Pong
            public static let method = "accounts.ping", session = SessionUse.none, retry = RetryClass.safe
            public init() {}
            enum CodingKeys: CodingKey, CaseIterable {}
        }

        public struct Balances: LatchkeyRequest, WireKeyed {
            public static let method = "accounts.balances", session = SessionUse.required, retry = RetryClass.safe
            public init() {}
            enum CodingKeys: CodingKey, CaseIterable {}

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                public let accounts: [Account]
                enum CodingKeys: String, CodingKey, CaseIterable { case accounts }
            }
        }

        /// Starts a transfer between the user's own accounts; a code bound to it goes to the phone.
        /// Keep the value and send it again after a failure: its `idempotencyKey` makes every try
        /// the same transfer.
        public struct Transfer: LatchkeyRequest, WireKeyed {
            public static let method = "accounts.transfer", session = SessionUse.required, retry = RetryClass.idempotencyKey
            public var from: AccountName
            public var to: AccountName
            /// Minor units (cents).
            public var amount: Int64
            public var idempotencyKey: String
            /// A new transfer gets a new random key; reuse the value (not a new one) to retry it.
            public init(from: AccountName, to: AccountName, amount: Int64, idempotencyKey: String = UUID().uuidString) {
                (self.from, self.to, self.amount, self.idempotencyKey) = (from, to, amount, idempotencyKey)
            }
            enum CodingKeys: String, CodingKey, CaseIterable { case from, to, amount, idempotencyKey = "idempotency_key" }

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                public let transferID: String
                public let requestID: String?
                /// `pending` for a new transfer; a retry answers the recorded one's current status.
                public let status: String
                enum CodingKeys: String, CodingKey, CaseIterable { case transferID = "transfer_id", requestID = "request_id", status }
            }
        }

        public struct Confirm: LatchkeyRequest, WireKeyed {
            public static let method = "accounts.confirm", session = SessionUse.required, retry = RetryClass.never
            public var transferID: String
            public var code: String
            public init(transferID: String, code: String) { (self.transferID, self.code) = (transferID, code) }
            enum CodingKeys: String, CodingKey, CaseIterable { case transferID = "transfer_id", code }

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                /// `done`: booked and on disk.
                public let status: String
                /// The balances after the transfer.
                public let accounts: [Account]
                enum CodingKeys: String, CodingKey, CaseIterable { case status, accounts }
            }
        }

        public struct History: LatchkeyRequest, WireKeyed {
            public static let method = "accounts.history", session = SessionUse.required, retry = RetryClass.safe
            /// 1-100 (server default 20).
            public var limit: Int?
            public var before: Cursor?
            public init(limit: Int? = nil, before: Cursor? = nil) { (self.limit, self.before) = (limit, before) }
            enum CodingKeys: String, CodingKey, CaseIterable { case limit, before }

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                /// Newest first.
                public let entries: [HistoryEntry]
                /// Pass as `before` for the next, older page; nil on the last page.
                public let next: Cursor?
                enum CodingKeys: String, CodingKey, CaseIterable { case entries, next }
            }
        }
    }
}

/// One account and its balance.
public struct Account: Codable, Sendable, Equatable {
    public let name: AccountName
    /// Minor units (cents): 500000 is 5,000.00.
    public let balance: Int64
    public let currency: String

    public init(name: AccountName, balance: Int64, currency: String) {
        (self.name, self.balance, self.currency) = (name, balance, currency)
    }
}

/// One ledger row of the user's accounts; a transfer has two, one per account.
public struct HistoryEntry: Codable, Sendable, Equatable {
    public enum Direction: String, Codable, Sendable {
        case debit
        case credit
    }

    public let transferID: String
    public let account: AccountName
    public let direction: Direction
    /// Positive, minor units.
    public let amount: Int64
    /// The other side: `checking`, `saving` or `external` (a deposit).
    public let counterpart: AccountName
    public let balanceAfter: Int64
    public let currency: String
    public let at: Date
    enum CodingKeys: String, CodingKey {
        case transferID = "transfer_id", account, direction, amount, counterpart, balanceAfter = "balance_after", currency, at
    }
}
