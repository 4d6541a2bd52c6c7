import Foundation

extension LatchkeyClient.Identity {
    public struct ChangePassword: LatchkeyRequest, WireKeyed {
        public static let method = "identity.change_password", session = SessionUse.required, retry = RetryClass.never
        public var currentPassword, newPassword: String
        public init(currentPassword: String, newPassword: String) { (self.currentPassword, self.newPassword) = (currentPassword, newPassword) }
        enum CodingKeys: String, CodingKey, CaseIterable { case currentPassword = "current_password", newPassword = "new_password" }

        public struct Response: Codable, Sendable, Equatable, WireKeyed {
            public let ok: Bool
            /// The user's other sessions that ended (this one stays).
            public let sessionsEnded: Int
            enum CodingKeys: String, CodingKey, CaseIterable { case ok, sessionsEnded = "sessions_ended" }
        }
    }

    public struct DeleteAccount: LatchkeyRequest, WireKeyed {
        public static let method = "identity.delete_account", session = SessionUse.required, retry = RetryClass.never
        public var password: String
        public init(password: String) { self.password = password }
        enum CodingKeys: String, CodingKey, CaseIterable { case password }

        public struct Response: Codable, Sendable, Equatable, WireKeyed {
            public let ok: Bool
            /// `closing_accounts`, `erasing`, `mailing` or `deleted`: all but the first mean the
            /// account is gone already; the first that accounts is still deciding.
            public let state: String
            enum CodingKeys: String, CodingKey, CaseIterable { case ok, state }
        }
    }

    /// The user's copy of their data: `protocol/export.schema.json` says every member.
    public struct Export: LatchkeyRequest, WireKeyed {
        public static let method = "identity.export", session = SessionUse.required, retry = RetryClass.safe
        public init() {}
        enum CodingKeys: CodingKey, CaseIterable {}

        public struct Response: Codable, Sendable, Equatable, WireKeyed {
            public let format: Int
            public let exportedAt: Int
            public let userID: String
            public let profile, factors: JSONValue
            public let sessions, devices, emailLinks, activity: [JSONValue]
            /// Each other service's part, under its name (always there through the gateway).
            public let accounts, verification, reset: JSONValue?
            enum CodingKeys: String, CodingKey, CaseIterable {
                case format, exportedAt = "exported_at", userID = "user_id", profile, factors, sessions, devices, emailLinks = "email_links",
                    activity, accounts, verification, reset
            }
        }
    }

    public struct ChangePhone: LatchkeyRequest, WireKeyed {
        public static let method = "identity.change_phone", session = SessionUse.required, retry = RetryClass.never
        public var phone: String
        public init(phone: String) { self.phone = phone }
        enum CodingKeys: String, CodingKey, CaseIterable { case phone }

        public struct Response: Codable, Sendable, Equatable, WireKeyed {
            public let ok: Bool
            /// False: the new number is a claim until a proof code passes.
            public let phoneVerified: Bool
            enum CodingKeys: String, CodingKey, CaseIterable { case ok, phoneVerified = "phone_verified" }
        }
    }

    /// What a mailed link's method answers: the address it is about.
    public struct AddressAnswer: Codable, Sendable, Equatable, WireKeyed {
        public let ok: Bool
        public let email: String
        enum CodingKeys: String, CodingKey, CaseIterable { case ok, email }
    }

    public struct VerifyEmail: LatchkeyRequest, WireKeyed {
        public typealias Response = AddressAnswer
        public static let method = "identity.verify_email", session = SessionUse.none, retry = RetryClass.never
        public var token: String
        public init(token: String) { self.token = token }
        enum CodingKeys: String, CodingKey, CaseIterable { case token }
    }

    public struct ResendVerification: LatchkeyRequest, WireKeyed {
        public typealias Response = OK
        public static let method = "identity.resend_verification", session = SessionUse.required, retry = RetryClass.never
        public init() {}
        enum CodingKeys: CodingKey, CaseIterable {}
    }

    public struct ChangeEmail: LatchkeyRequest, WireKeyed {
        public typealias Response = OK
        public static let method = "identity.change_email", session = SessionUse.required, retry = RetryClass.never
        public var email: String
        public init(email: String) { self.email = email }
        enum CodingKeys: String, CodingKey, CaseIterable { case email }
    }

    public struct ConfirmEmailChange: LatchkeyRequest, WireKeyed {
        public typealias Response = AddressAnswer
        public static let method = "identity.confirm_email_change", session = SessionUse.none, retry = RetryClass.never
        public var token: String
        public init(token: String) { self.token = token }
        enum CodingKeys: String, CodingKey, CaseIterable { case token }
    }

    public struct RevertEmailChange: LatchkeyRequest, WireKeyed {
        public typealias Response = AddressAnswer
        public static let method = "identity.revert_email_change", session = SessionUse.none, retry = RetryClass.never
        public var token: String
        public init(token: String) { self.token = token }
        enum CodingKeys: String, CodingKey, CaseIterable { case token }
    }
}
