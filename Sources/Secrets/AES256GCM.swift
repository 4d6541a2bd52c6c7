import COpenSSL

/// AES-256-GCM through OpenSSL's EVP interface, for small secrets kept at rest (a TOTP seed).
/// A sealed box is `nonce (12) || ciphertext || tag (16)`; the nonce is random per seal, so one
/// key may seal up to about 2^32 boxes. `associatedData` is authenticated, not encrypted: bind
/// the box to its row (a user id) so it cannot be moved to another.
public enum AES256GCM {
    public static let keyByteCount = 32
    public static let nonceByteCount = 12
    public static let tagByteCount = 16

    public static func seal(_ plaintext: [UInt8], key: [UInt8], associatedData: [UInt8]) -> [UInt8] {
        precondition(key.count == keyByteCount, "AES-256-GCM: the key must be 32 bytes")
        let nonce = SecureRandom.bytes(nonceByteCount)
        guard let context = EVP_CIPHER_CTX_new() else { fatalOpenSSL("AES-256-GCM: EVP_CIPHER_CTX_new failed") }
        defer { EVP_CIPHER_CTX_free(context) }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        var tag = [UInt8](repeating: 0, count: tagByteCount)
        var written: Int32 = 0
        var finalWritten: Int32 = 0
        guard EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce) == 1,
            addAssociatedData(context, associatedData, encrypting: true),
            withBytes(plaintext, { data, count in
                ciphertext.withUnsafeMutableBufferPointer { EVP_EncryptUpdate(context, $0.baseAddress, &written, data, Int32(count)) }
            }) == 1,
            ciphertext.withUnsafeMutableBufferPointer({ EVP_EncryptFinal_ex(context, $0.baseAddress! + Int(written), &finalWritten) }) == 1,
            tag.withUnsafeMutableBufferPointer({ EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(tagByteCount), $0.baseAddress) }) == 1
        else { fatalOpenSSL("AES-256-GCM: sealing failed") }
        return nonce + ciphertext.prefix(Int(written + finalWritten)) + tag
    }

    /// The plaintext, or an error when the box is malformed, was sealed under another key or
    /// other associated data, or was altered (the tag does not verify).
    public static func open(_ box: [UInt8], key: [UInt8], associatedData: [UInt8]) throws(SecretsError) -> [UInt8] {
        precondition(key.count == keyByteCount, "AES-256-GCM: the key must be 32 bytes")
        guard box.count >= nonceByteCount + tagByteCount else { throw SecretsError("AES-256-GCM: sealed box too short") }
        let nonce = Array(box.prefix(nonceByteCount))
        let ciphertext = Array(box.dropFirst(nonceByteCount).dropLast(tagByteCount))
        var tag = Array(box.suffix(tagByteCount))
        guard let context = EVP_CIPHER_CTX_new() else { fatalOpenSSL("AES-256-GCM: EVP_CIPHER_CTX_new failed") }
        defer { EVP_CIPHER_CTX_free(context) }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 16)
        var written: Int32 = 0
        var finalWritten: Int32 = 0
        guard EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce) == 1,
            addAssociatedData(context, associatedData, encrypting: false),
            withBytes(ciphertext, { data, count in
                plaintext.withUnsafeMutableBufferPointer { EVP_DecryptUpdate(context, $0.baseAddress, &written, data, Int32(count)) }
            }) == 1,
            tag.withUnsafeMutableBufferPointer({ EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagByteCount), $0.baseAddress) }) == 1
        else { fatalOpenSSL("AES-256-GCM: opening failed") }
        let verified = plaintext.withUnsafeMutableBufferPointer { EVP_DecryptFinal_ex(context, $0.baseAddress! + Int(written), &finalWritten) }
        guard verified == 1 else {
            ERR_clear_error()
            secureWipe(&plaintext)
            throw SecretsError("AES-256-GCM: the sealed box does not verify")
        }
        return Array(plaintext.prefix(Int(written + finalWritten)))
    }

    private static func addAssociatedData(_ context: OpaquePointer, _ data: [UInt8], encrypting: Bool) -> Bool {
        guard !data.isEmpty else { return true }
        var ignored: Int32 = 0
        return withBytes(data) { bytes, count in
            encrypting
                ? EVP_EncryptUpdate(context, nil, &ignored, bytes, Int32(count)) == 1
                : EVP_DecryptUpdate(context, nil, &ignored, bytes, Int32(count)) == 1
        }
    }
}
