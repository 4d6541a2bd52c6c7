/// Opaque bearer tokens: a readable prefix (`lks_` session, `lkr_` reset) + base64url of 32
/// random bytes, so secret scanners can spot leaked ones. Store only `hash(_:)`.
public enum OpaqueToken {
    static let randomByteCount = 32
    /// base64url of 32 bytes without padding.
    static let encodedLength = 43

    public static func make(prefix: String) -> String {
        var random = SecureRandom.bytes(randomByteCount)
        defer { secureWipe(&random) }
        return prefix + Base64URL.encode(random)
    }

    /// SHA-256 of the token's UTF-8 bytes (what the database keeps).
    public static func hash(_ token: String) -> [UInt8] {
        SHA256.hash(token)
    }

    /// `prefix` followed by exactly 43 url-safe base64 characters that decode to 32 bytes
    /// (canonical encoding: the last character's unused bits are zero). Compared byte-wise.
    public static func isWellFormed(_ token: String, prefix: String) -> Bool {
        let bytes = Array(token.utf8)
        let prefixBytes = Array(prefix.utf8)
        guard bytes.count == prefixBytes.count + encodedLength,
              bytes.starts(with: prefixBytes) else { return false }
        return Base64Codec.decode(bytes[prefixBytes.count...], alphabet: .urlSafe, allowPadding: false)?
            .count == randomByteCount
    }
}
