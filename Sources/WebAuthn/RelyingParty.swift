import Secrets

/// An attestation statement format (WebAuthn L3 §8) this verifier knows; the raw value is the
/// `fmt` string.
public enum AttestationFormat: String, Sendable, CaseIterable {
    case none
    case packed
    case apple
}

/// Who verifies: the RP ID the credentials are scoped to, the origins its pages are served
/// from, and what attestation it takes.
public struct RelyingParty: Sendable {
    /// The RP ID: a registrable domain suffix of the origins' hosts ("example.com", "localhost").
    public let id: String
    /// Origins accepted in client data, compared exactly ("https://example.com", "http://localhost:8080").
    public let origins: [String]
    public let allowedFormats: Set<AttestationFormat>
    /// The roots an `apple` attestation's chain must reach; nil: Apple's WebAuthn root, parsed
    /// at the first Apple attestation (a service at rest does no OpenSSL work).
    private let givenAppleRoots: [X509Certificate]?

    public init(id: String, origins: [String], allowedFormats: Set<AttestationFormat> = Set(AttestationFormat.allCases), appleRoots: [X509Certificate]? = nil) {
        self.id = id
        self.origins = origins
        self.allowedFormats = allowedFormats
        givenAppleRoots = appleRoots
    }

    public var appleRoots: [X509Certificate] { givenAppleRoots ?? [AppleWebAuthnRoot.certificate] }

    /// SHA-256 of the RP ID, as authenticator data carries it.
    var idHash: [UInt8] { SHA256.hash(id) }
}
