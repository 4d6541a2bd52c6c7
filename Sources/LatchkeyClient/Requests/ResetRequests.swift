import Foundation

extension LatchkeyClient {
    /// `reset.*`: password reset by e-mailed link (`protocol/reset.md`).
    public enum Reset: LatchkeyService {
        public static let name = "reset"
        public typealias Ping = ServicePing<Reset>

        /// Always answers `ok` for a well-formed address, known or not.
        public struct Request: LatchkeyRequest, WireKeyed {
            public typealias Response = OK
            public static let method = "reset.request", session = SessionUse.none, retry = RetryClass.never
            public var email: String
            public init(email: String) { self.email = email }
            enum CodingKeys: String, CodingKey, CaseIterable { case email }
        }

        /// Checks a link's token before showing the new-password form; changes nothing.
        public struct Validate: LatchkeyRequest, WireKeyed {
            public static let method = "reset.validate", session = SessionUse.none, retry = RetryClass.safe
            public var token: String
            public init(token: String) { self.token = token }
            enum CodingKeys: String, CodingKey, CaseIterable { case token }

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                public let valid: Bool
                public let expiresAt: Date
                enum CodingKeys: String, CodingKey, CaseIterable { case valid, expiresAt = "expires_at" }
            }
        }

        /// Sets the new password; every session of the user ends and device keys are revoked.
        public struct Complete: LatchkeyRequest, WireKeyed {
            public typealias Response = OK
            public static let method = "reset.complete", session = SessionUse.none, retry = RetryClass.never
            public var token: String
            public var password: String
            public init(token: String, password: String) { (self.token, self.password) = (token, password) }
            enum CodingKeys: String, CodingKey, CaseIterable { case token, password }
        }
    }
}
