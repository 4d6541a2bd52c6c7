/// Authenticator data (WebAuthn L3 §6.1): what the authenticator signs, before the client data's hash.
public struct AuthenticatorData: Sendable {
    public struct Flags: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let userPresent = Flags(rawValue: 0x01)
        public static let userVerified = Flags(rawValue: 0x04)
        public static let backupEligible = Flags(rawValue: 0x08)
        public static let backedUp = Flags(rawValue: 0x10)
        public static let attestedCredentialData = Flags(rawValue: 0x40)
        public static let extensionData = Flags(rawValue: 0x80)
    }

    /// Attested credential data (§6.5.2), present at registration.
    public struct AttestedCredential: Sendable {
        public let aaguid: [UInt8]
        public let credentialID: [UInt8]
        public let publicKey: COSEKey
    }

    /// L3 §6.5.2: credentialIdLength is at most 1023.
    public static let maxCredentialIDBytes = 1023

    public let rpIDHash: [UInt8]
    public let flags: Flags
    public let signCount: UInt32
    public let attestedCredential: AttestedCredential?
    /// The extension outputs map, when the ED flag is set.
    public let extensions: CBOR?

    /// Refuses data that ends early or runs on after its parts, an AT flag without attested
    /// credential data (and such data without the flag: it would be trailing bytes), the same
    /// for ED, and BS without BE (L3 §6.1.3).
    public init(_ bytes: [UInt8]) throws(WebAuthnError) {
        guard bytes.count >= 37 else { throw Self.malformed("shorter than 37 bytes") }
        rpIDHash = Array(bytes[0..<32])
        flags = Flags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        if flags.contains(.backedUp) && !flags.contains(.backupEligible) {
            throw Self.malformed("backed up (BS) but not backup eligible (BE)")
        }
        var rest = bytes[37...]
        if flags.contains(.attestedCredentialData) {
            attestedCredential = try Self.attestedCredential(from: &rest)
        } else {
            attestedCredential = nil
        }
        if flags.contains(.extensionData) {
            let (value, byteCount) = try Self.item(from: rest, "extensions")
            guard value.mapEntries != nil else { throw Self.malformed("extensions are not a map") }
            extensions = value
            rest = rest.dropFirst(byteCount)
        } else {
            extensions = nil
        }
        guard rest.isEmpty else { throw Self.malformed("bytes after the flagged parts") }
    }

    private static func attestedCredential(from rest: inout ArraySlice<UInt8>) throws(WebAuthnError) -> AttestedCredential {
        guard rest.count >= 18 else { throw malformed("attested credential data flagged but cut short") }
        let aaguid = Array(rest.prefix(16))
        let idLength = Int(rest[rest.startIndex + 16]) << 8 | Int(rest[rest.startIndex + 17])
        rest = rest.dropFirst(18)
        guard idLength > 0, idLength <= maxCredentialIDBytes else { throw malformed("credential ID empty or longer than 1023 bytes") }
        guard rest.count >= idLength else { throw malformed("credential ID runs past the end") }
        let credentialID = Array(rest.prefix(idLength))
        rest = rest.dropFirst(idLength)
        let (value, byteCount) = try item(from: rest, "credential public key")
        let publicKey = try COSEKey(value, encoded: Array(rest.prefix(byteCount)))
        rest = rest.dropFirst(byteCount)
        return AttestedCredential(aaguid: aaguid, credentialID: credentialID, publicKey: publicKey)
    }

    private static func item(from bytes: ArraySlice<UInt8>, _ what: String) throws(WebAuthnError) -> (CBOR, Int) {
        do {
            return try CBORDecoder.decodePrefix(bytes)
        } catch {
            throw malformed("\(what): \(error.kind.rawValue)")
        }
    }

    private static func malformed(_ what: String) -> WebAuthnError {
        WebAuthnError(.malformed, "authenticator data: \(what)")
    }
}
