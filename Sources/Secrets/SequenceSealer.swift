import COpenSSL
import FoundationEssentials
import Platform

/// Turns a database sequence number into an opaque name that only its owner's requests accept
/// back: one AES-256 block (a pseudo-random permutation) over `sequence (8, big-endian) ||
/// tag (8)`, the tag being HMAC-SHA256 over `sequence || owner` cut to 8 bytes, in base64url
/// (22 characters). The name is deterministic (a row keeps its name across listings), says
/// nothing of the sequence (so nothing of other owners' rows between two of one owner's), and
/// cannot be made without the key: a guess, or another owner's name, fails the tag (2^-64).
/// Each `purpose` derives keys of its own, so a name issued for one use is refused by another.
/// The keys are derived on first use, like `HMACKey`'s state, so a service at rest has not
/// started OpenSSL's default provider; the service key is kept only until then.
public final class SequenceSealer: @unchecked Sendable {
    public static let textByteCount = 22
    private static let tagByteCount = 8
    private let purpose: String
    private let lock = Lock()
    /// Guarded by `lock`: the service key until the first use, empty after it.
    private var key: [UInt8]
    /// Guarded by `lock`; nil until the first use.
    private var derived: (cipher: [UInt8], tag: HMACKey)?

    public init(key: [UInt8], purpose: String) {
        self.key = key
        self.purpose = purpose
    }

    public func seal(_ sequence: Int64, owner: String) -> String {
        let keys = ready()
        let number = Self.bytes(sequence)
        return Base64URL.encode(Self.crypt(number + Self.tag(number, owner: owner, keys.tag), key: keys.cipher, encrypting: true))
    }

    /// The sequence `text` names, or nil for anything `seal` did not give for this owner and purpose.
    public func open(_ text: String, owner: String) -> Int64? {
        guard text.utf8.count == Self.textByteCount, let block = Base64URL.decode(text), Base64URL.encode(block) == text else { return nil }
        let keys = ready()
        let plain = Self.crypt(block, key: keys.cipher, encrypting: false)
        let number = Array(plain.prefix(8))
        guard constantTimeEquals(Array(plain.suffix(Self.tagByteCount)), Self.tag(number, owner: owner, keys.tag)) else { return nil }
        return Int64(bitPattern: number.reduce(0) { $0 << 8 | UInt64($1) })
    }

    private func ready() -> (cipher: [UInt8], tag: HMACKey) {
        lock.lock()
        defer { lock.unlock() }
        if let derived { return derived }
        let made = (
            cipher: HMACSHA256.authenticate(Array("latchkey sequence seal v1 cipher\0\(purpose)".utf8), key: key),
            tag: HMACKey(HMACSHA256.authenticate(Array("latchkey sequence seal v1 tag\0\(purpose)".utf8), key: key)))
        derived = made
        key = []
        return made
    }

    private static func tag(_ number: [UInt8], owner: String, _ key: HMACKey) -> [UInt8] {
        Array(key.authenticate(number + Array(owner.utf8)).prefix(tagByteCount))
    }

    private static func bytes(_ sequence: Int64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: sequence) >> (56 - 8 * $0)) }
    }

    /// AES-256 on exactly one 16-byte block (ECB without padding: one block is the permutation itself).
    private static func crypt(_ block: [UInt8], key: [UInt8], encrypting: Bool) -> [UInt8] {
        precondition(block.count == 16, "one AES block")
        guard let context = EVP_CIPHER_CTX_new() else { fatalOpenSSL("AES-256: EVP_CIPHER_CTX_new failed") }
        defer { EVP_CIPHER_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: 32)
        var written: Int32 = 0
        guard EVP_CipherInit_ex(context, EVP_aes_256_ecb(), nil, key, nil, encrypting ? 1 : 0) == 1,
            EVP_CIPHER_CTX_set_padding(context, 0) == 1,
            withBytes(block, { data, count in
                output.withUnsafeMutableBufferPointer { EVP_CipherUpdate(context, $0.baseAddress, &written, data, Int32(count)) }
            }) == 1,
            written == 16
        else { fatalOpenSSL("AES-256: one block failed") }
        return Array(output.prefix(16))
    }
}
