// Base64 / base64url / hex. Pure Swift: encodings, not cryptography.

/// base64url (RFC 4648 §5) for tokens and challenges.
public enum Base64URL {
    /// url-safe alphabet, no padding.
    public static func encode(_ bytes: [UInt8]) -> String {
        Base64Codec.encode(bytes, alphabet: Base64Codec.urlSafe, padding: false)
    }

    /// Accepts the url-safe or the standard alphabet (not both mixed in one string), with or
    /// without `=` padding. Returns nil for anything else: whitespace, other characters, an
    /// impossible length, misplaced padding, or non-zero unused bits in the last character
    /// (so each byte string has exactly one accepted spelling per alphabet/padding choice).
    public static func decode(_ text: String) -> [UInt8]? {
        Base64Codec.decode(text.utf8, alphabet: .either, allowPadding: true)
    }
}

/// Standard base64 (RFC 4648 §4) with padding.
public enum Base64 {
    public static func encode(_ bytes: [UInt8]) -> String {
        Base64Codec.encode(bytes, alphabet: Base64Codec.standard, padding: true)
    }
}

/// Lowercase hex.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Upper or lower case, even length, nothing else (no prefix, no whitespace).
    public static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 2)
        var index = 0
        while index < chars.count {
            guard let high = nibble(chars[index]), let low = nibble(chars[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// The shared codec behind Base64URL, Base64, PHC strings and token checks.
enum Base64Codec {
    static let standard = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let urlSafe = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    enum Alphabet { case standard, urlSafe, either }

    static func encode(_ bytes: [UInt8], alphabet: [UInt8], padding: Bool) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
            out.append(alphabet[Int(n & 63)])
            index += 3
        }
        switch bytes.count - index {
        case 1:
            let n = UInt32(bytes[index]) << 16
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            if padding { out.append(contentsOf: [UInt8(ascii: "="), UInt8(ascii: "=")]) }
        case 2:
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
            if padding { out.append(UInt8(ascii: "=")) }
        default:
            break
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Strict decoder; see Base64URL.decode for the rules.
    static func decode<C: Collection>(_ text: C, alphabet: Alphabet, allowPadding: Bool) -> [UInt8]?
    where C.Element == UInt8 {
        var chars = Array(text)
        let totalCount = chars.count
        var padCount = 0
        while let last = chars.last, last == UInt8(ascii: "=") {
            chars.removeLast()
            padCount += 1
        }
        if padCount > 0 {
            guard allowPadding, padCount <= 2, totalCount % 4 == 0 else { return nil }
        }
        guard chars.count % 4 != 1 else { return nil }
        if padCount > 0 {
            guard (chars.count + padCount) % 4 == 0, chars.count % 4 != 0 else { return nil }
        }

        var sawStandard = false
        var sawURLSafe = false
        var values = [UInt8]()
        values.reserveCapacity(chars.count)
        for c in chars {
            let value: UInt8
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = c - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = c - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = c - UInt8(ascii: "0") + 52
            case UInt8(ascii: "+"): value = 62; sawStandard = true
            case UInt8(ascii: "/"): value = 63; sawStandard = true
            case UInt8(ascii: "-"): value = 62; sawURLSafe = true
            case UInt8(ascii: "_"): value = 63; sawURLSafe = true
            default: return nil
            }
            values.append(value)
        }
        switch alphabet {
        case .standard: if sawURLSafe { return nil }
        case .urlSafe: if sawStandard { return nil }
        case .either: if sawStandard && sawURLSafe { return nil }
        }

        var out = [UInt8]()
        out.reserveCapacity(values.count * 3 / 4)
        var index = 0
        while index + 4 <= values.count {
            let n = UInt32(values[index]) << 18 | UInt32(values[index + 1]) << 12
                | UInt32(values[index + 2]) << 6 | UInt32(values[index + 3])
            out.append(UInt8(n >> 16 & 0xff))
            out.append(UInt8(n >> 8 & 0xff))
            out.append(UInt8(n & 0xff))
            index += 4
        }
        switch values.count - index {
        case 2:
            guard values[index + 1] & 0x0f == 0 else { return nil }
            out.append(values[index] << 2 | values[index + 1] >> 4)
        case 3:
            guard values[index + 2] & 0x03 == 0 else { return nil }
            out.append(values[index] << 2 | values[index + 1] >> 4)
            out.append((values[index + 1] & 0x0f) << 4 | values[index + 2] >> 2)
        default:
            break
        }
        return out
    }
}
