import Secrets
import TestSupport
import WebAuthn

/// A packed attestation CA made with the `openssl` command line: a root and an attestation key
/// whose certificates `leaf` makes, as an authenticator vendor would.
struct PackedAttestationCA {
    static let subject = "/C=US/O=Test Vendor/OU=Authenticator Attestation/CN=Test Batch 1"

    let scratch: OpenSSLScratch
    let root: [UInt8]

    /// `rsa`: the attestation key is RSA 2048 (RS256) instead of P-256 (ES256).
    init(rsa: Bool = false) throws {
        scratch = try OpenSSLScratch()
        try scratch.makeKey("root.key", .p256)
        try scratch.makeKey("attestation.key", rsa ? .rsa(bits: 2048) : .p256)
        root = try scratch.makeRoot("root", key: "root.key", subject: "/CN=Test Vendor Attestation Root")
    }

    /// The attestation certificate: by default what §8.2.1 asks, naming `aaguid`.
    func leaf(subject: String = subject, aaguid: [UInt8]?, extensions: [String] = ["basicConstraints=critical,CA:FALSE"]) throws -> [UInt8] {
        let named = aaguid.map { ["1.3.6.1.4.1.45724.1.1.4=DER:04:10:" + Hex.encode($0)] } ?? []
        return try scratch.makeCertificate("leaf", key: "attestation.key", subject: subject, issuer: "root", issuerKey: "root.key", extensions: extensions + named)
    }

    func sign(_ message: [UInt8]) throws -> [UInt8] {
        try scratch.sign(message, with: "attestation.key")
    }
}

/// An Apple-style anonymisation CA: root → intermediate → a certificate per registration for the
/// credential key, carrying the nonce in 1.2.840.113635.100.8.2.
struct AppleStyleCA {
    let scratch: OpenSSLScratch
    let root: X509Certificate
    let credentialKey: CredentialKey

    init() throws {
        scratch = try OpenSSLScratch()
        try scratch.makeKey("root.key", .p256)
        try scratch.makeKey("intermediate.key", .p256)
        root = try X509Certificate(der: try scratch.makeRoot("root", key: "root.key", subject: "/CN=Test WebAuthn Root CA/O=Test"))
        _ = try scratch.makeCertificate(
            "intermediate", key: "intermediate.key", subject: "/CN=Test WebAuthn CA 1/O=Test", issuer: "root", issuerKey: "root.key",
            extensions: ["basicConstraints=critical,CA:TRUE,pathlen:0", "keyUsage=critical,keyCertSign"])
        credentialKey = try .openSSLP256(in: scratch)
    }

    /// [leaf, intermediate]: the leaf names `nonce` and certifies `key` (the credential's by default).
    func chain(nonce: [UInt8], key: String = "credential-p256.key") throws -> [[UInt8]] {
        let leaf = try scratch.makeCertificate(
            "leaf", key: key, subject: "/CN=\(Hex.encode(SecureRandom.bytes(8)))/OU=AAA Certification/O=Test", issuer: "intermediate",
            issuerKey: "intermediate.key", extensions: ["1.2.840.113635.100.8.2=DER:30:24:A1:22:04:20:" + Hex.encode(nonce)])
        return [leaf, try scratch.der(of: "intermediate.pem")]
    }
}
