import LineProtocol
import Secrets

/// A platform authenticator in software, for the benches, the tests and the tools: one
/// ES256 passkey with a growing counter, making the registration (`none` attestation) and the
/// assertions a browser's virtual authenticator or an iPhone would. Never a security boundary:
/// its key lives in this process.
public final class SoftwareAuthenticator: @unchecked Sendable {
    public let credentialID: [UInt8]
    public let origin: String
    public let rpID: String
    /// 0 forever, as synced passkeys (iCloud Keychain) do, unless told to count.
    public private(set) var signCount: UInt32
    private let key = P256PrivateKey()
    private let counts: Bool

    public init(rpID: String, origin: String, countsSignatures: Bool = false) {
        credentialID = SecureRandom.bytes(16)
        self.rpID = rpID
        self.origin = origin
        counts = countsSignatures
        signCount = 0
    }

    /// The COSE_Key of this passkey's public key.
    public var publicKeyCOSE: [UInt8] { COSEKey.encoding(p256: key.publicKey) }

    /// `attestationObject` and `clientDataJSON` for `challenge`, user verified.
    public func register(challenge: [UInt8]) -> (attestationObject: [UInt8], clientDataJSON: [UInt8]) {
        let credential = [UInt8](repeating: 0, count: 16) + [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xff)] + credentialID + publicKeyCOSE
        let authenticatorData = header(flags: 0x45) + credential
        let attestation = CBOR.map([
            (.text("fmt"), .text("none")), (.text("attStmt"), .map([CBORMapEntry]())), (.text("authData"), .bytes(authenticatorData)),
        ])
        return (CBOREncoder.encode(attestation), clientData("webauthn.create", challenge))
    }

    /// An assertion over `challenge`; `userVerified` false leaves the UV flag off.
    public func assert(challenge: [UInt8], userVerified: Bool = true) -> (authenticatorData: [UInt8], clientDataJSON: [UInt8], signature: [UInt8]) {
        if counts { signCount += 1 }
        let authenticatorData = header(flags: userVerified ? 0x05 : 0x01)
        let clientDataJSON = clientData("webauthn.get", challenge)
        return (authenticatorData, clientDataJSON, key.signature(for: authenticatorData + SHA256.hash(clientDataJSON)))
    }

    private func header(flags: UInt8) -> [UInt8] {
        SHA256.hash(rpID) + [flags] + (0..<4).reversed().map { UInt8(truncatingIfNeeded: signCount >> (8 * UInt32($0))) }
    }

    private func clientData(_ type: String, _ challenge: [UInt8]) -> [UInt8] {
        let json: JSON = ["type": .string(type), "challenge": .string(Base64URL.encode(challenge)), "origin": .string(origin), "crossOrigin": false]
        return json.encoded()
    }
}

extension COSEKey {
    /// The COSE_Key (EC2, ES256, P-256) of `key`.
    public static func encoding(p256 key: P256PublicKey) -> [UInt8] {
        CBOREncoder.encode(.map([
            (.int(1), .int(2)), (.int(3), .int(Int64(es256))), (.int(-1), .int(1)),
            (.int(-2), .bytes(Array(key.x963[1..<33]))), (.int(-3), .bytes(Array(key.x963[33..<65]))),
        ]))
    }

    public init(p256 key: P256PublicKey) throws(WebAuthnError) {
        try self.init(encoded: Self.encoding(p256: key))
    }
}
