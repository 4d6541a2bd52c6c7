import Foundation

extension LatchkeyClient.Identity {
    /// Makes a new authenticator-app secret, pending until `TotpActivate`. A sensitive change:
    /// needs a second factor passed in the last minutes (`stepUpRequired(.recentStepUp)`).
    public struct TotpEnroll: LatchkeyRequest, WireKeyed {
        public static let method = "identity.totp_enroll", session = SessionUse.required, retry = RetryClass.never
        public init() {}
        enum CodingKeys: CodingKey, CaseIterable {}

        /// Shown once, never again: put `uri` in a QR code, offer `secret` for typing.
        public struct Response: Codable, Sendable, Equatable, WireKeyed {
            /// The 160-bit secret in Base32. A secret: never log it or keep it.
            public let secret: String
            /// `otpauth://totp/<issuer>:<username>?secret=...` (Key Uri Format).
            public let uri: String
            enum CodingKeys: String, CodingKey, CaseIterable { case secret, uri }
        }
    }

    /// Turns the pending secret on with one code from the app (proof it was scanned).
    public struct TotpActivate: LatchkeyRequest, WireKeyed {
        public typealias Response = OK
        public static let method = "identity.totp_activate", session = SessionUse.required, retry = RetryClass.never
        /// Six digits, as a string.
        public var code: String
        public init(code: String) { self.code = code }
        enum CodingKeys: String, CodingKey, CaseIterable { case code }
    }

    /// A code from the authenticator app as the second factor (the `totp` factor).
    public struct TotpVerify: LatchkeyRequest, WireKeyed {
        public static let method = "identity.totp_verify", session = SessionUse.required, retry = RetryClass.never
        public var code: String
        public init(code: String) { self.code = code }
        enum CodingKeys: String, CodingKey, CaseIterable { case code }

        public struct Response: Codable, Sendable, Equatable, WireKeyed {
            public let aal: Int
            enum CodingKeys: String, CodingKey, CaseIterable { case aal }
        }
    }

    /// Deletes the authenticator app's secret, active or pending. A sensitive change.
    public struct TotpRemove: LatchkeyRequest, WireKeyed {
        public typealias Response = OK
        public static let method = "identity.totp_remove", session = SessionUse.required, retry = RetryClass.safe
        public init() {}
        enum CodingKeys: CodingKey, CaseIterable {}
    }

    /// Ten new single-use recovery codes, replacing every earlier one. A sensitive change.
    public struct RecoveryCodes: LatchkeyRequest, WireKeyed {
        public static let method = "identity.recovery_codes", session = SessionUse.required, retry = RetryClass.never
        public init() {}
        enum CodingKeys: CodingKey, CaseIterable {}

        public struct Response: Codable, Sendable, Equatable, WireKeyed {
            /// `xxxxx-xxxxx`, shown this once for the person to write down. Secrets: never log or keep them.
            public let codes: [String]
            enum CodingKeys: String, CodingKey, CaseIterable { case codes }
        }
    }

    /// A recovery code in place of any factor the session owes (the phone was lost).
    public struct RecoveryVerify: LatchkeyRequest, WireKeyed {
        public static let method = "identity.recovery_verify", session = SessionUse.required, retry = RetryClass.never
        /// Any case, with or without the dash or spaces.
        public var code: String
        public init(code: String) { self.code = code }
        enum CodingKeys: String, CodingKey, CaseIterable { case code }

        public struct Response: Codable, Sendable, Equatable, WireKeyed {
            public let aal: Int
            /// Unused codes left: tell the person, and offer a new set when few remain.
            public let remaining: Int
            enum CodingKeys: String, CodingKey, CaseIterable { case aal, remaining }
        }
    }
}

// An app that logs what it got (`print`, `os_log("\(value)")`, `dump`) must not log the secret
// or the codes: their descriptions and mirrors say only what kind of value it is.
extension LatchkeyClient.Identity.TotpEnroll.Response: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "TotpEnroll.Response(secret: <redacted>, uri: <redacted>)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

extension LatchkeyClient.Identity.RecoveryCodes.Response: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "RecoveryCodes.Response(codes: <\(codes.count) redacted>)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
