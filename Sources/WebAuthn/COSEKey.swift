import Secrets

/// A credential public key as a COSE_Key (RFC 9052 §7, RFC 9053 §2.1 and §7.1, RFC 8230 §4):
/// ES256 on P-256, or RS256. `encoded` is the bytes it was read from: store them, and read them
/// again with `init(encoded:)` to check the credential's assertions.
public struct COSEKey: Sendable, Equatable {
    public enum PublicKey: Sendable, Equatable {
        case es256(P256PublicKey)
        case rs256(RSAPublicKey)
    }

    /// COSE algorithm identifiers.
    public static let es256 = -7
    public static let rs256 = -257

    public let encoded: [UInt8]
    /// `COSEKey.es256` or `COSEKey.rs256`.
    public let algorithm: Int
    public let publicKey: PublicKey

    /// Exactly one COSE_Key, nothing after it.
    public init(encoded: [UInt8]) throws(WebAuthnError) {
        let value: CBOR
        do {
            value = try CBORDecoder.decode(encoded)
        } catch {
            throw WebAuthnError(.malformed, "credential public key: \(error.kind.rawValue)")
        }
        try self.init(value, encoded: encoded)
    }

    /// `value` decoded from `encoded`.
    init(_ value: CBOR, encoded: [UInt8]) throws(WebAuthnError) {
        guard value.mapEntries != nil else { throw Self.malformed("not a map") }
        guard let keyType = value[Label.keyType]?.integer else { throw Self.malformed("kty missing") }
        guard let algorithm = value[Label.algorithm]?.integer else { throw Self.malformed("alg missing") }
        switch Int(algorithm) {
        case Self.es256:
            guard keyType == KeyType.ec2 else { throw Self.malformed("ES256 needs kty 2 (EC2)") }
            publicKey = .es256(try Self.p256Key(value))
        case Self.rs256:
            guard keyType == KeyType.rsa else { throw Self.malformed("RS256 needs kty 3 (RSA)") }
            publicKey = .rs256(try Self.rsaKey(value))
        default:
            throw WebAuthnError(.unsupportedAlgorithm, "credential public key: alg \(algorithm) is neither ES256 (-7) nor RS256 (-257)")
        }
        self.encoded = encoded
        self.algorithm = Int(algorithm)
    }

    /// ES256 signatures are DER (WebAuthn §6.5.6), RS256 ones PKCS#1 v1.5.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        switch publicKey {
        case .es256(let key): return key.isValidSignature(der: signature, for: message)
        case .rs256(let key): return key.isValidPKCS1SHA256Signature(signature, for: message)
        }
    }

    public static func == (lhs: COSEKey, rhs: COSEKey) -> Bool { lhs.encoded == rhs.encoded }

    private enum Label {
        static let keyType: Int64 = 1
        static let algorithm: Int64 = 3
        static let ec2Curve: Int64 = -1, ec2X: Int64 = -2, ec2Y: Int64 = -3, ec2Private: Int64 = -4
        static let rsaModulus: Int64 = -1, rsaExponent: Int64 = -2, rsaPrivate: Int64 = -3
    }

    private enum KeyType {
        static let ec2: Int64 = 2
        static let rsa: Int64 = 3
    }

    private static let curveP256: Int64 = 1

    private static func p256Key(_ value: CBOR) throws(WebAuthnError) -> P256PublicKey {
        guard let curve = value[Label.ec2Curve]?.integer else { throw malformed("crv missing") }
        guard curve == curveP256 else { throw WebAuthnError(.unsupportedAlgorithm, "credential public key: ES256 on a curve other than P-256") }
        // A private key where a public one belongs is a broken authenticator.
        guard value[Label.ec2Private] == nil else { throw malformed("holds a private key") }
        guard let x = value[Label.ec2X]?.bytes, x.count == 32, let y = value[Label.ec2Y]?.bytes, y.count == 32 else {
            throw malformed("x and y must be 32-byte strings")
        }
        do {
            return try P256PublicKey(x963: [0x04] + x + y)
        } catch {
            throw malformed("not a point on P-256")
        }
    }

    private static func rsaKey(_ value: CBOR) throws(WebAuthnError) -> RSAPublicKey {
        guard value[Label.rsaPrivate] == nil else { throw malformed("holds a private key") }
        guard let modulus = value[Label.rsaModulus]?.bytes, let exponent = value[Label.rsaExponent]?.bytes else {
            throw malformed("n and e must be byte strings")
        }
        do {
            return try RSAPublicKey(modulus: modulus, exponent: exponent)
        } catch {
            throw WebAuthnError(.unsupportedAlgorithm, "credential public key: RSA modulus or exponent outside what is accepted")
        }
    }

    private static func malformed(_ what: String) -> WebAuthnError {
        WebAuthnError(.malformed, "credential public key: \(what)")
    }
}
