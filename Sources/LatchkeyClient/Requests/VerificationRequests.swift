import Foundation

extension LatchkeyClient {
    /// `verification.*`: one-time codes by SMS and voice (`protocol/verification.md`).
    public enum Verification: LatchkeyService {
        public static let name = "verification"
        public typealias Ping = ServicePing<Verification>

        /// A login code to the phone on the user's profile.
        public struct Start: LatchkeyRequest, WireKeyed {
            public static let method = "verification.start", session = SessionUse.required, retry = RetryClass.never
            /// One step by this channel; nil: the server's workflow (SMS, then voice, then voice).
            public var channel: CodeChannel?
            /// The message's language: `en`, `fr`, `ru` (`fr-CA` reads as `fr`); nil: the server's default.
            /// An app passes `Locale.current.identifier`'s language.
            public var locale: String?
            public init(channel: CodeChannel? = nil, locale: String? = nil) { (self.channel, self.locale) = (channel, locale) }
            enum CodingKeys: String, CodingKey, CaseIterable { case channel, locale }

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
            public static let method = "verification.next", session = SessionUse.required, retry = RetryClass.never
            public var requestID: String
            public init(requestID: String) { self.requestID = requestID }
            enum CodingKeys: String, CodingKey, CaseIterable { case requestID = "request_id" }

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                /// `pending` while the next step's code is out.
                public let status: String
                /// The channel the code now travels by.
                public let channel: CodeChannel
                enum CodingKeys: String, CodingKey, CaseIterable { case status, channel }
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
