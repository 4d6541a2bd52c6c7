import Foundation

extension LatchkeyClient {
    /// `verification.*`: one-time codes by SMS and voice (`protocol/verification.md`).
    public enum Verification: Sendable {
        public struct Ping: LatchkeyRequest, WireKeyed {
            public typealias Response = Pong
            public static let method = "verification.ping", session = SessionUse.none, retry = RetryClass.safe
            public init() {}
            enum CodingKeys: CodingKey, CaseIterable {}
        }

        /// A login code to the phone on the user's profile.
        public struct Start: LatchkeyRequest, WireKeyed {
            public static let method = "verification.start", session = SessionUse.required, retry = RetryClass.never
            /// One step by this channel; nil: the server's workflow (SMS, then voice, then voice).
            public var channel: CodeChannel?
            public init(channel: CodeChannel? = nil) { self.channel = channel }
            enum CodingKeys: String, CodingKey, CaseIterable { case channel }

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                public let requestID: String
                /// `login`, or `phone_proof` while the user has not proved the phone (the code is then the proof too).
                public let purpose: String?
                enum CodingKeys: String, CodingKey, CaseIterable { case requestID = "request_id", purpose }
            }
        }

        public struct Check: LatchkeyRequest, WireKeyed {
            public static let method = "verification.check", session = SessionUse.required, retry = RetryClass.never
            public var requestID: String
            /// Digits, as a string: leading zeros count.
            public var code: String
            public init(requestID: String, code: String) { (self.requestID, self.code) = (requestID, code) }
            enum CodingKeys: String, CodingKey, CaseIterable { case requestID = "request_id", code }

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                public let status: String
                public let aal: Int?
                /// true when this code also proved the phone.
                public let phoneVerified: Bool?
                enum CodingKeys: String, CodingKey, CaseIterable { case status, aal, phoneVerified = "phone_verified" }
            }
        }

        public struct Cancel: LatchkeyRequest, WireKeyed {
            public typealias Response = StatusResponse
            public static let method = "verification.cancel", session = SessionUse.required, retry = RetryClass.never
            public var requestID: String
            public init(requestID: String) { self.requestID = requestID }
            enum CodingKeys: String, CodingKey, CaseIterable { case requestID = "request_id" }
        }

        /// The workflow's next step now (a call instead of waiting for the SMS).
        public struct Next: LatchkeyRequest, WireKeyed {
            public typealias Response = StatusResponse
            public static let method = "verification.next", session = SessionUse.required, retry = RetryClass.never
            public var requestID: String
            public init(requestID: String) { self.requestID = requestID }
            enum CodingKeys: String, CodingKey, CaseIterable { case requestID = "request_id" }
        }

        /// What became of a code's messages (sent, retried, failed). Never the code.
        public struct Status: LatchkeyRequest, WireKeyed {
            public static let method = "verification.status", session = SessionUse.required, retry = RetryClass.safe
            public var requestID: String
            public init(requestID: String) { self.requestID = requestID }
            enum CodingKeys: String, CodingKey, CaseIterable { case requestID = "request_id" }

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                public let requestID: String
                public let status: String
                public let events: [JSONValue]
                enum CodingKeys: String, CodingKey, CaseIterable { case requestID = "request_id", status, events }
            }
        }

        public struct StatusResponse: Codable, Sendable, Equatable, WireKeyed {
            /// `pending`, `verified`, `cancelled`, `failed`, `expired`.
            public let status: String
            enum CodingKeys: String, CodingKey, CaseIterable { case status }
        }
    }
}

/// How a login code travels.
public enum CodeChannel: String, Codable, Sendable, CaseIterable {
    case sms
    case voice
}
