import COpenSSL

/// An RSA public key for RS256 (RSASSA-PKCS1-v1_5 with SHA-256), as WebAuthn's COSE keys and
/// attestation certificates carry it.
public struct RSAPublicKey: Sendable, Equatable {
    /// Big-endian, without leading zero bytes.
    public let modulus: [UInt8]
    /// Big-endian, without leading zero bytes.
    public let exponent: [UInt8]
    private let key: EVPKey

    public static let minimumModulusBits = 2048
    public static let maximumModulusBits = 8192

    /// Refuses a modulus under 2048 or over 8192 bits or even, and an exponent that is even, 1,
    /// or over 64 bits (OpenSSL refuses those with a modulus over 3072 bits anyway, and every
    /// real key uses 65537). Leading zero bytes are ignored.
    public init(modulus: [UInt8], exponent: [UInt8]) throws(SecretsError) {
        let modulus = Array(modulus.drop { $0 == 0 })
        let exponent = Array(exponent.drop { $0 == 0 })
        let bits = Self.bitCount(modulus)
        guard bits >= Self.minimumModulusBits, bits <= Self.maximumModulusBits else {
            throw SecretsError("RSA public key: the modulus has \(bits) bits, outside 2048...8192")
        }
        guard modulus[modulus.count - 1] & 1 == 1 else {
            throw SecretsError("RSA public key: the modulus is even")
        }
        guard let last = exponent.last, last & 1 == 1, exponent != [1], exponent.count <= 8 else {
            throw SecretsError("RSA public key: the exponent must be odd, greater than 1 and at most 64 bits")
        }
        let created = modulus.withUnsafeBufferPointer { n in
            exponent.withUnsafeBufferPointer { e in
                lk_EVP_PKEY_from_rsa_public(n.baseAddress, n.count, e.baseAddress, e.count)
            }
        }
        guard let raw = created else { throw SecretsError.openSSL("RSA public key: OpenSSL refused the key") }
        self.modulus = modulus
        self.exponent = exponent
        self.key = EVPKey(taking: raw)
    }

    /// RSASSA-PKCS1-v1_5 over SHA-256 of `message`. A signature must be exactly as long as the
    /// modulus; anything else, or another padding (PSS), answers false.
    public func isValidPKCS1SHA256Signature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard signature.count == modulus.count else { return false }
        guard let context = EVP_MD_CTX_new() else { fatalOpenSSL("RSA: EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key.pointer) == 1 else {
            fatalOpenSSL("RSA: EVP_DigestVerifyInit failed")
        }
        let rc = withBytes(signature) { signature, signatureCount in
            withBytes(message) { data, count in
                EVP_DigestVerify(context, signature, signatureCount, data, count)
            }
        }
        if rc != 1 { ERR_clear_error() }
        return rc == 1
    }

    public static func == (lhs: RSAPublicKey, rhs: RSAPublicKey) -> Bool {
        lhs.modulus == rhs.modulus && lhs.exponent == rhs.exponent
    }

    private static func bitCount(_ bigEndian: [UInt8]) -> Int {
        guard let first = bigEndian.first else { return 0 }
        return (bigEndian.count - 1) * 8 + (8 - first.leadingZeroBitCount)
    }
}
