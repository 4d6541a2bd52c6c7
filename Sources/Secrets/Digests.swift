import COpenSSL

/// SHA-256 through OpenSSL (EVP_Digest).
public enum SHA256 {
    public static let byteCount = 32

    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: byteCount)
        var length: UInt32 = 0
        let rc = withBytes(bytes) { data, count in
            digest.withUnsafeMutableBufferPointer { out in
                EVP_Digest(data, count, out.baseAddress, &length, EVP_sha256(), nil)
            }
        }
        guard rc == 1, length == UInt32(byteCount) else { fatalOpenSSL("SHA256: EVP_Digest failed") }
        return digest
    }

    /// SHA-256 of the string's UTF-8 bytes.
    public static func hash(_ string: String) -> [UInt8] {
        hash(Array(string.utf8))
    }
}

/// HMAC-SHA-256, the one every service uses (`HMACAlgorithm` has the others TOTP may name).
/// Compare tags with `constantTimeEquals`.
public enum HMACSHA256 {
    public static let byteCount = 32

    public static func authenticate(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        HMACAlgorithm.sha256.authenticate(message, key: key)
    }
}

/// Constant-time equality (CRYPTO_memcmp). Different lengths answer false at once, without
/// looking at the contents (lengths of tags and hashes are public).
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    return a.withUnsafeBufferPointer { pa in
        b.withUnsafeBufferPointer { pb in
            CRYPTO_memcmp(pa.baseAddress, pb.baseAddress, pa.count) == 0
        }
    }
}

/// Overwrites the array's storage with zeros through OPENSSL_cleanse (which the compiler may not
/// optimise away). Copies made earlier (Swift arrays are copy-on-write) are not reached: wipe
/// the buffer that was actually used, and avoid copying secrets around.
public func secureWipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { raw in
        if let base = raw.baseAddress, raw.count > 0 { OPENSSL_cleanse(base, raw.count) }
    }
}
