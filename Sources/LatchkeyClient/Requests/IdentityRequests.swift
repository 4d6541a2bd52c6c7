import Foundation

extension LatchkeyClient {
    /// `identity.*`: users, sessions, preferences, device keys (`protocol/identity.md`).
    public enum Identity: LatchkeyService {
        public static let name = "identity"
        public typealias Ping = ServicePing<Identity>

        public struct Register: LatchkeyRequest, WireKeyed {
            public static let method = "identity.register", session = SessionUse.none, retry = RetryClass.never
            public var username, password, email, phone: String
            /// The language of the account's mails (English when nil).
            public var locale: MailLanguage?
            public init(username: String, password: String, email: String, phone: String, locale: MailLanguage? = nil) {
                (self.username, self.password, self.email, self.phone, self.locale) = (username, password, email, phone, locale)
            }
            enum CodingKeys: String, CodingKey, CaseIterable { case username, password, email, phone, locale }

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                public let userID: String
                enum CodingKeys: String, CodingKey, CaseIterable { case userID = "user_id" }
            }
        }

        public struct Login: LatchkeyRequest, WireKeyed {
            public static let method = "identity.login", session = SessionUse.none, retry = RetryClass.never
            public var username, password, deviceID: String
            /// The token the previous login on this device answered: it exempts this device from
            /// locks that guessers elsewhere cause.
            public var deviceToken: String?
            public init(username: String, password: String, deviceID: String, deviceToken: String? = nil) {
                (self.username, self.password, self.deviceID, self.deviceToken) = (username, password, deviceID, deviceToken)
            }
            enum CodingKeys: String, CodingKey, CaseIterable {
                case username, password, deviceID = "device_id", deviceToken = "device_token"
            }

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                public let session: String
                public let sessionID: String
                public let aal: Int
                public let requiredFactors: [Factor]
                /// The anti-phishing image (base64), if the user chose one.
                public let sitekey: String?
                public let deviceToken: String?
                enum CodingKeys: String, CodingKey, CaseIterable {
                    case session, sessionID = "session_id", aal, requiredFactors = "required_factors", sitekey, deviceToken = "device_token"
                }
            }
        }

        public struct Logout: LatchkeyRequest, WireKeyed {
            public typealias Response = OK
            public static let method = "identity.logout", session = SessionUse.required, retry = RetryClass.safe
            public init() {}
            enum CodingKeys: CodingKey, CaseIterable {}
        }

        public struct Sessions: LatchkeyRequest, WireKeyed {
            public static let method = "identity.sessions", session = SessionUse.required, retry = RetryClass.safe
            public init() {}
            enum CodingKeys: CodingKey, CaseIterable {}

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                public let sessions: [SessionSummary]
                enum CodingKeys: String, CodingKey, CaseIterable { case sessions }
            }
        }

        public struct Revoke: LatchkeyRequest, WireKeyed {
            public typealias Response = OK
            public static let method = "identity.revoke", session = SessionUse.required, retry = RetryClass.safe
            public var sessionID: String
            public init(sessionID: String) { self.sessionID = sessionID }
            enum CodingKeys: String, CodingKey, CaseIterable { case sessionID = "session_id" }
        }

        public struct Preferences: LatchkeyRequest, WireKeyed {
            public static let method = "identity.preferences", session = SessionUse.required, retry = RetryClass.never
            /// nil: leave as it is.
            public var smsVerification: Bool?
            public var sitekey: SitekeyChange
            public var locale: MailLanguage?
            public init(smsVerification: Bool? = nil, sitekey: SitekeyChange = .keep, locale: MailLanguage? = nil) {
                (self.smsVerification, self.sitekey, self.locale) = (smsVerification, sitekey, locale)
            }
            enum CodingKeys: String, CodingKey, CaseIterable { case smsVerification = "sms_verification", sitekey, locale }

            public func encode(to encoder: Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encodeIfPresent(smsVerification, forKey: .smsVerification)
                try container.encodeIfPresent(locale, forKey: .locale)
                switch sitekey {
                case .keep: break
                case .remove: try container.encodeNil(forKey: .sitekey)
                case .set(let image): try container.encode(image.base64EncodedString(), forKey: .sitekey)
                }
            }

            public init(from decoder: Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                smsVerification = try container.decodeIfPresent(Bool.self, forKey: .smsVerification)
                locale = try container.decodeIfPresent(MailLanguage.self, forKey: .locale)
                if !container.contains(.sitekey) {
                    sitekey = .keep
                } else if let text = try container.decodeIfPresent(String.self, forKey: .sitekey) {
                    sitekey = .set(Data(base64Encoded: text) ?? Data())
                } else {
                    sitekey = .remove
                }
            }

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                public let smsVerification: Bool
                public let sitekey: String?
                /// Every second factor the user has, for the app to offer a choice: `sms` (always),
                /// `totp` once an authenticator app is active, `device_key` with an active biometry key.
                public let factors: [Factor]
                /// Unused recovery codes (0 until the user generates a set).
                public let recoveryCodesLeft: Int
                /// The account's address, and whether its owner proved it with the mailed link.
                public let email: String
                public let emailVerified: Bool
                /// The language of the account's mails.
                public let locale: MailLanguage
                enum CodingKeys: String, CodingKey, CaseIterable {
                    case smsVerification = "sms_verification", sitekey, factors, recoveryCodesLeft = "recovery_codes_left", email,
                        emailVerified = "email_verified", locale
                }
            }
        }

        /// A fresh challenge for this device: for the signed-in user (`verify_key`, `enroll` proof)
        /// when `username` is nil, else for `username` (`key_login`, no session).
        public struct Challenge: OptionalSessionRequest, WireKeyed {
            public static let method = "identity.challenge", session = SessionUse.optional, retry = RetryClass.safe
            public var deviceID: String
            public var username: String?
            public init(deviceID: String, username: String? = nil) { (self.deviceID, self.username) = (deviceID, username) }
            var sendsSession: Bool { username == nil }
            enum CodingKeys: String, CodingKey, CaseIterable { case deviceID = "device_id", username }

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                /// base64url of 32 random bytes: the device signs the decoded bytes.
                public let challenge: String
                public let expiresAt: Date
                enum CodingKeys: String, CodingKey, CaseIterable { case challenge, expiresAt = "expires_at" }
            }
        }

        public struct EnrollKey: LatchkeyRequest, WireKeyed {
            public static let method = "identity.enroll_key", session = SessionUse.required, retry = RetryClass.never
            public var deviceID: String
            /// The X9.63 uncompressed point (65 bytes), sent as base64.
            public var publicKey: Data
            public var protection: KeyProtection
            /// The App Attest key that vouches for this key (see `AppAttestChallenge`).
            public var appAttest: AppAttestProof?
            public init(deviceID: String, publicKey: Data, protection: KeyProtection, appAttest: AppAttestProof? = nil) {
                (self.deviceID, self.publicKey, self.protection, self.appAttest) = (deviceID, publicKey, protection, appAttest)
            }
            enum CodingKeys: String, CodingKey, CaseIterable {
                case deviceID = "device_id", publicKey = "public_key", protection, appAttest = "app_attest"
            }

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                public let keyID: String
                enum CodingKeys: String, CodingKey, CaseIterable { case keyID = "key_id" }
            }
        }

        public struct VerifyKey: LatchkeyRequest, WireKeyed {
            public static let method = "identity.verify_key", session = SessionUse.required, retry = RetryClass.never
            public var deviceID: String
            public var challenge: String
            /// DER ECDSA P-256 over SHA-256 of the decoded challenge, sent as base64.
            public var signature: Data
            /// `DCAppAttestService.generateAssertion(_:clientDataHash:)` over SHA-256 of the decoded challenge.
            public var appAttestAssertion: Data?
            public init(deviceID: String, challenge: String, signature: Data, appAttestAssertion: Data? = nil) {
                (self.deviceID, self.challenge, self.signature, self.appAttestAssertion) = (deviceID, challenge, signature, appAttestAssertion)
            }
            enum CodingKeys: String, CodingKey, CaseIterable {
                case deviceID = "device_id", challenge, signature, appAttestAssertion = "app_attest_assertion"
            }

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                public let aal: Int
                enum CodingKeys: String, CodingKey, CaseIterable { case aal }
            }
        }

        public struct KeyLogin: LatchkeyRequest, WireKeyed {
            public static let method = "identity.key_login", session = SessionUse.none, retry = RetryClass.never
            public var username, deviceID, challenge: String
            public var signature: Data
            /// As for `VerifyKey`: over SHA-256 of the decoded challenge.
            public var appAttestAssertion: Data?
            public init(username: String, deviceID: String, challenge: String, signature: Data, appAttestAssertion: Data? = nil) {
                (self.username, self.deviceID, self.challenge, self.signature) = (username, deviceID, challenge, signature)
                self.appAttestAssertion = appAttestAssertion
            }
            enum CodingKeys: String, CodingKey, CaseIterable {
                case username, deviceID = "device_id", challenge, signature, appAttestAssertion = "app_attest_assertion"
            }

            /// A key login answers as a password login does.
            public typealias Response = Login.Response
        }

        public struct Keys: LatchkeyRequest, WireKeyed {
            public static let method = "identity.keys", session = SessionUse.required, retry = RetryClass.safe
            public init() {}
            enum CodingKeys: CodingKey, CaseIterable {}

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                public let keys: [DeviceKeySummary]
                enum CodingKeys: String, CodingKey, CaseIterable { case keys }
            }
        }

        public struct RevokeKey: LatchkeyRequest, WireKeyed {
            public typealias Response = OK
            public static let method = "identity.revoke_key", session = SessionUse.required, retry = RetryClass.safe
            public var keyID: String
            public init(keyID: String) { self.keyID = keyID }
            enum CodingKeys: String, CodingKey, CaseIterable { case keyID = "key_id" }
        }

        public struct Activity: LatchkeyRequest, WireKeyed {
            public static let method = "identity.activity", session = SessionUse.required, retry = RetryClass.safe
            public var limit: Int?
            public var before: Cursor?
            public init(limit: Int? = nil, before: Cursor? = nil) { (self.limit, self.before) = (limit, before) }
            enum CodingKeys: String, CodingKey, CaseIterable { case limit, before }

            public struct Response: Codable, Sendable, Equatable, WireKeyed {
                public let events: [ActivityEvent]
                /// Pass as `before` for the next, older page; nil on the last page.
                public let next: Cursor?
                enum CodingKeys: String, CodingKey, CaseIterable { case events, next }
            }
        }
    }
}

/// `sitekey` in `identity.preferences`: absent, `null` or an image.
public enum SitekeyChange: Sendable, Equatable {
    case keep
    case remove
    /// A PNG, JPEG, GIF or WebP image (the server's size limit applies).
    case set(Data)
}

/// One of the user's live sessions (`identity.sessions`). Never a token.
public struct SessionSummary: Codable, Sendable, Equatable {
    public let sessionID: String
    public let deviceID: String
    public let aal: Int
    public let createdAt: Date
    public let lastSeenAt: Date
    public let expiresAt: Date
    /// The session asking.
    public let current: Bool
    /// Only on the caller's own entry.
    public let requiredFactors: [Factor]?
    enum CodingKeys: String, CodingKey {
        case sessionID = "session_id", deviceID = "device_id", aal, createdAt = "created_at", lastSeenAt = "last_seen_at"
        case expiresAt = "expires_at", current, requiredFactors = "required_factors"
    }
}

/// An active device key (`identity.keys`). Never the key material.
public struct DeviceKeySummary: Codable, Sendable, Equatable {
    public let keyID: String
    public let deviceID: String
    public let protection: KeyProtection
    public let createdAt: Date
    public let lastUsedAt: Date?
    /// The app whose App Attest key vouched for this key at enrolment; nil when none did.
    public let appAttest: AppAttestedBy?
    enum CodingKeys: String, CodingKey {
        case keyID = "key_id", deviceID = "device_id", protection, createdAt = "created_at", lastUsedAt = "last_used_at", appAttest = "app_attest"
    }

    public struct AppAttestedBy: Codable, Sendable, Equatable {
        public let appID: String
        /// `development` or `production`.
        public let environment: String
        enum CodingKeys: String, CodingKey { case appID = "app_id", environment }
    }
}

/// An authentication event of the user's own ("was this you?").
public struct ActivityEvent: Codable, Sendable, Equatable {
    /// Names the event, the same in every listing; opaque (it neither orders events nor is a
    /// cursor: pages take the answer's `next`).
    public let eventID: String
    public let event: String
    public let outcome: String
    public let at: Date
    public let deviceID: String?
    public let client: String?
    enum CodingKeys: String, CodingKey {
        case eventID = "event_id", event, outcome, at, deviceID = "device_id", client
    }
}

/// `{"pong": true}`.
public struct Pong: Codable, Sendable, Equatable, WireKeyed {
    public let pong: Bool
    enum CodingKeys: String, CodingKey, CaseIterable { case pong }
}
