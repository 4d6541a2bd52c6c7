import Foundation

/// A name the server may add to (factors, accounts, kinds of history entry): any string decodes,
/// so a server newer than this client never breaks it, and the names this client knows are
/// static members. On the wire it is the bare string (the standard library's coding of a
/// `RawRepresentable` whose raw value is a `String`).
public protocol OpenName: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible where RawValue == String {
    init(rawValue: String)
}

extension OpenName {
    public var description: String { rawValue }
}

/// A second factor a session may owe (`required_factors`). Open-ended on purpose: a server
/// newer than this client may name factors it does not know yet, and they still decode.
public struct Factor: OpenName {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A code by SMS (or, through `verification.next`, by voice) to the proven phone.
    public static let sms = Factor(rawValue: "sms")
    /// A signature by this device's enrolled key (`identity.verify_key`).
    public static let deviceKey = Factor(rawValue: "device_key")
    /// A passkey assertion with user verification (`identity.passkey_verify`).
    public static let passkey = Factor(rawValue: "passkey")
    /// A code from the user's authenticator app (`identity.totp_verify`). A recovery code
    /// (`identity.recovery_verify`) pays any factor and is never listed itself.
    public static let totp = Factor(rawValue: "totp")
}

/// How a device key is protected on the phone (`protection`).
public enum KeyProtection: String, Codable, Sendable, CaseIterable {
    /// `.biometryCurrentSet`: biometrics only; a signature is a second factor (lifts a session to aal 2).
    case biometry
    /// `.userPresence`: biometrics or the device passcode; a signature proves possession only (aal stays).
    case userPresence = "user_presence"
}

/// One of the user's accounts (`checking`, `saving`); open-ended like `Factor`.
public struct AccountName: OpenName {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let checking = AccountName(rawValue: "checking")
    public static let saving = AccountName(rawValue: "saving")
    /// The outside world, in history: the counterpart of a deposit.
    public static let external = AccountName(rawValue: "external")
}

/// An opaque paging cursor: a page's `next`, handed back as `before` for the next, older page.
/// The server builds it; the client neither reads nor builds one (what it holds may change).
public struct Cursor: Codable, Hashable, Sendable {
    let value: String

    public init(from decoder: Decoder) throws { value = try decoder.singleValueContainer().decode(String.self) }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

/// `{"ok": true}`.
public struct OK: Codable, Sendable, Equatable, WireKeyed {
    public let ok: Bool
    enum CodingKeys: String, CodingKey, CaseIterable { case ok }
}

