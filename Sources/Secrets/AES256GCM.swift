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
        let nonce = SecureRandom.bytes(nonceByteCount)
        var tag = [UInt8](repeating: 0, count: tagByteCount)
        guard let ciphertext = crypt(plaintext, key: key, nonce: nonce, associatedData: associatedData, tag: &tag, sealing: true) else {
            fatalOpenSSL("AES-256-GCM: sealing failed")
        }
        return nonce + ciphertext + tag
    }

    /// The plaintext, or an error when the box is malformed, was sealed under another key or
    /// other associated data, or was altered (the tag does not verify).
    public static func open(_ box: [UInt8], key: [UInt8], associatedData: [UInt8]) throws(SecretsError) -> [UInt8] {
        guard box.count >= nonceByteCount + tagByteCount else { throw SecretsError("AES-256-GCM: sealed box too short") }
        let nonce = Array(box.prefix(nonceByteCount))
        let ciphertext = Array(box.dropFirst(nonceByteCount).dropLast(tagByteCount))
        var tag = Array(box.suffix(tagByteCount))
        guard let plaintext = crypt(ciphertext, key: key, nonce: nonce, associatedData: associatedData, tag: &tag, sealing: false) else {
            throw SecretsError("AES-256-GCM: the sealed box does not verify")
        }
        return plaintext
    }

    /// One pass in either direction through EVP_Cipher*: the tag is read after the final step
    /// when sealing, and set before it when opening, where a final step that fails means the box
    /// does not verify (nil, the partial plaintext wiped).
    private static func crypt(
        _ input: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8], tag: inout [UInt8], sealing: Bool
    ) -> [UInt8]? {
        precondition(key.count == keyByteCount, "AES-256-GCM: the key must be 32 bytes")
        guard let context = EVP_CIPHER_CTX_new() else { fatalOpenSSL("AES-256-GCM: EVP_CIPHER_CTX_new failed") }
        defer { EVP_CIPHER_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0
        var finalWritten: Int32 = 0
        var ignored: Int32 = 0
        guard EVP_CipherInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce, sealing ? 1 : 0) == 1,
            associatedData.isEmpty || withBytes(associatedData, { EVP_CipherUpdate(context, nil, &ignored, $0, Int32($1)) }) == 1,
            withBytes(input, { data, count in
                output.withUnsafeMutableBufferPointer { EVP_CipherUpdate(context, $0.baseAddress, &written, data, Int32(count)) }
            }) == 1,
            sealing || tag.withUnsafeMutableBufferPointer({ EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagByteCount), $0.baseAddress) }) == 1
        else { fatalOpenSSL("AES-256-GCM: \(sealing ? "sealing" : "opening") failed") }
        let finished = output.withUnsafeMutableBufferPointer { EVP_CipherFinal_ex(context, $0.baseAddress! + Int(written), &finalWritten) }
        guard finished == 1 else {
            ERR_clear_error()
            secureWipe(&output)
            return nil
        }
        if sealing {
            guard tag.withUnsafeMutableBufferPointer({ EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(tagByteCount), $0.baseAddress) }) == 1
            else { fatalOpenSSL("AES-256-GCM: sealing failed") }
        }
        return Array(output.prefix(Int(written + finalWritten)))
    }
}
