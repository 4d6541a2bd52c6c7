import COpenSSL

/// HMAC with the hash functions RFC 6238 (TOTP) names: SHA-1, SHA-256 and SHA-512, through
/// OpenSSL's one-shot HMAC(). Compare tags with `constantTimeEquals`.
public enum HMACAlgorithm: String, Sendable, CaseIterable {
    case sha1 = "SHA1"
    case sha256 = "SHA256"
    case sha512 = "SHA512"

    public var byteCount: Int {
        switch self {
        case .sha1: 20
        case .sha256: 32
        case .sha512: 64
        }
    }

    private var digest: OpaquePointer? {
        switch self {
        case .sha1: EVP_sha1()
        case .sha256: EVP_sha256()
        case .sha512: EVP_sha512()
        }
    }

    public func authenticate(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        precondition(key.count <= Int(Int32.max), "HMAC: key too long")
        var tag = [UInt8](repeating: 0, count: byteCount)
        var length: UInt32 = 0
        let result = withBytes(key) { keyPointer, keyCount in
            withBytes(message) { data, count in
                tag.withUnsafeMutableBufferPointer { out in
                    HMAC(digest, keyPointer, Int32(keyCount), data, count, out.baseAddress, &length)
                }
            }
        }
        guard result != nil, length == UInt32(byteCount) else { fatalOpenSSL("HMAC \(rawValue): HMAC failed") }
        return tag
    }
}
