import Foundation

extension LatchkeyClient {
    /// `accounts.*`: balances, transfers confirmed by a code, history (`protocol/accounts.md`).
    public enum Accounts: LatchkeyService {
        public static let name = "accounts"
        public typealias Ping = ServicePing<Accounts>

        public struct Balances: LatchkeyRequest, WireKeyed {
            public static let method = "accounts.balances", session = SessionUse.required, retry = RetryClass.safe
            public init() {}
            enum CodingKeys: CodingKey, CaseIterable {}

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                public let accounts: [Account]
                enum CodingKeys: String, CodingKey, CaseIterable { case accounts }
            }
        }

        /// Starts a transfer between the user's own accounts, to be confirmed by a code sent to the
        /// phone (`confirmWith: .sms`) or by this device's biometry key (`.deviceKey`). Keep the
        /// value and send it again after a failure: its `idempotencyKey` makes every try the same transfer.
        public struct Transfer: LatchkeyRequest, WireKeyed {
            public static let method = "accounts.transfer", session = SessionUse.required, retry = RetryClass.idempotencyKey
            public var from: AccountName
            public var to: AccountName
            /// Minor units (cents).
            public var amount: Int64
            public var idempotencyKey: String
            public var confirmWith: TransferConfirmation
            /// A new transfer gets a new random key; reuse the value (not a new one) to retry it.
            public init(
                from: AccountName, to: AccountName, amount: Int64, idempotencyKey: String = UUID().uuidString,
                confirmWith: TransferConfirmation = .sms
            ) {
                (self.from, self.to, self.amount, self.idempotencyKey, self.confirmWith) = (from, to, amount, idempotencyKey, confirmWith)
            }
            enum CodingKeys: String, CodingKey, CaseIterable {
                case from, to, amount, idempotencyKey = "idempotency_key", confirmWith = "confirm_with", deviceID = "device_id"
            }

            public func encode(to encoder: Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(from, forKey: .from)
                try container.encode(to, forKey: .to)
                try container.encode(amount, forKey: .amount)
                try container.encode(idempotencyKey, forKey: .idempotencyKey)
                // `sms` is the server's default: an SMS transfer sends the same body as before device keys existed.
                if case .deviceKey(let deviceID) = confirmWith {
                    try container.encode("device_key", forKey: .confirmWith)
                    try container.encode(deviceID, forKey: .deviceID)
                }
            }

            public init(from decoder: Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                from = try container.decode(AccountName.self, forKey: .from)
                to = try container.decode(AccountName.self, forKey: .to)
                amount = try container.decode(Int64.self, forKey: .amount)
                idempotencyKey = try container.decode(String.self, forKey: .idempotencyKey)
                switch try container.decodeIfPresent(String.self, forKey: .confirmWith) ?? "sms" {
                case "sms": confirmWith = .sms
                case "device_key": confirmWith = .deviceKey(deviceID: try container.decode(String.self, forKey: .deviceID))
                case let other:
                    throw DecodingError.dataCorruptedError(forKey: .confirmWith, in: container, debugDescription: "unknown confirm_with \(other)")
                }
            }

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                public let transferID: String
                /// The code's verification (SMS transfers); nil for a device-key transfer.
                public let requestID: String?
                /// `pending` for a new transfer; a retry answers the recorded one's current status.
                public let status: String
                /// What moves, in minor units of `currency`, from which account to which.
                public let amount: Int64
                public let currency: String
                public let from: AccountName
                public let to: AccountName
                /// When the pending transfer (and its code) expires, in seconds since 1970.
                public let expiresAt: Int64
                /// `device_key` for a transfer the device key confirms; nil or `sms` otherwise.
                public let confirmWith: String?
                /// Device-key transfers: the device whose key must sign.
                public let deviceID: String?
                /// Device-key transfers: the challenge bound to this transfer (base64url), also inside `sign`.
                public let challenge: String?
                /// Device-key transfers: base64url of the exact bytes the device signs (see `bytesToSign`).
                public let sign: String?
                enum CodingKeys: String, CodingKey, CaseIterable {
                    case transferID = "transfer_id", requestID = "request_id", status, amount, currency, from, to, expiresAt = "expires_at"
                    case confirmWith = "confirm_with", deviceID = "device_id", challenge, sign
                }

                /// The bytes to show the person and sign (UTF-8 `name=value` lines: the transfer's id,
                /// amount, currency, accounts, the challenge); nil when `sign` is absent or not base64url.
                public var bytesToSign: Data? { sign.flatMap(Base64URL.decode) }
            }
        }

        /// Books a pending transfer: with the code from its own SMS, or with this device's
        /// signature over the transfer's `sign` bytes.
        public struct Confirm: LatchkeyRequest, WireKeyed {
            public static let method = "accounts.confirm", session = SessionUse.required, retry = RetryClass.never
            public var transferID: String
            public var proof: TransferProof
            /// The App Attest assertion over SHA-256 of the same `sign` bytes (`generateAssertion`).
            public var appAttestAssertion: Data?
            public init(transferID: String, code: String) { (self.transferID, proof) = (transferID, .code(code)) }
            /// `signature`: DER ECDSA P-256 over SHA-256 of the `sign` bytes, sent as base64url.
            public init(transferID: String, deviceID: String, signature: Data, appAttestAssertion: Data? = nil) {
                (self.transferID, proof, self.appAttestAssertion) = (transferID, .signature(deviceID: deviceID, signature: signature), appAttestAssertion)
            }
            enum CodingKeys: String, CodingKey, CaseIterable {
                case transferID = "transfer_id", code, deviceID = "device_id", signature, appAttestAssertion = "app_attest_assertion"
            }

            public func encode(to encoder: Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(transferID, forKey: .transferID)
                switch proof {
                case .code(let code):
                    try container.encode(code, forKey: .code)
                case .signature(let deviceID, let signature):
                    try container.encode(deviceID, forKey: .deviceID)
                    try container.encode(Base64URL.encode(signature), forKey: .signature)
                }
                try container.encodeIfPresent(appAttestAssertion, forKey: .appAttestAssertion)
            }

            public init(from decoder: Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                transferID = try container.decode(String.self, forKey: .transferID)
                appAttestAssertion = try container.decodeIfPresent(Data.self, forKey: .appAttestAssertion)
                if let code = try container.decodeIfPresent(String.self, forKey: .code) {
                    proof = .code(code)
                } else {
                    let text = try container.decode(String.self, forKey: .signature)
                    guard let signature = Base64URL.decode(text) else {
                        throw DecodingError.dataCorruptedError(forKey: .signature, in: container, debugDescription: "signature is not base64url")
                    }
                    proof = .signature(deviceID: try container.decode(String.self, forKey: .deviceID), signature: signature)
                }
            }

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                /// `done`: booked and on disk.
                public let status: String
                public let transferID: String
                /// The balances after the transfer.
                public let accounts: [Account]
                enum CodingKeys: String, CodingKey, CaseIterable { case status, transferID = "transfer_id", accounts }
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

/// How a transfer is to be confirmed (`confirm_with`).
public enum TransferConfirmation: Sendable, Equatable {
    /// A code bound to the transfer goes to the proven phone (the default).
    case sms
    /// This device's `biometry` key signs the transfer's own bytes; no SMS is sent.
    /// `deviceID` must be the signed-in session's device.
    case deviceKey(deviceID: String)
}

/// What confirms a transfer in `accounts.confirm`.
public enum TransferProof: Sendable, Equatable {
    case code(String)
    case signature(deviceID: String, signature: Data)
}

/// One ledger row of the user's accounts: a transfer has two (one per account), a deposit one.
public struct HistoryEntry: Codable, Sendable, Equatable {
    public enum Direction: String, Codable, Sendable {
        case debit
        case credit
    }

    /// What booked the row: a transfer's id (`tr_...`) or a deposit's (`dp_...`).
    public let entryID: String
    public let kind: HistoryEntryKind
    /// On `transfer` entries only: the id `accounts.transfer` gave (the same as `entryID`).
    public let transferID: String?
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
        case entryID = "entry_id", kind, transferID = "transfer_id", account, direction, amount, counterpart
        case balanceAfter = "balance_after", currency, at
    }
}

/// `transfer` (between the user's own accounts) or `deposit` (money in from outside); open-ended
/// like `Factor`, so a kind a newer server adds still decodes.
public struct HistoryEntryKind: OpenName {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let transfer = HistoryEntryKind(rawValue: "transfer")
    public static let deposit = HistoryEntryKind(rawValue: "deposit")
}
