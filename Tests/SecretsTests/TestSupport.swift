import Secrets
import TestSupport
import XCTest

/// Minimal DER handling for ECDSA-Sig-Value (SEQUENCE { r INTEGER, s INTEGER }) in tests.
/// Short-form lengths only, which is all a P-256 signature needs.
enum TestDER {
    /// The P-256 group order n.
    static let order = hex("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")

    static func parse(_ der: [UInt8]) -> (r: [UInt8], s: [UInt8])? {
        guard der.count >= 8, der[0] == 0x30, Int(der[1]) == der.count - 2, der[2] == 0x02 else { return nil }
        let rLength = Int(der[3])
        let sTag = 4 + rLength
        guard sTag + 2 <= der.count, der[sTag] == 0x02 else { return nil }
        let sLength = Int(der[sTag + 1])
        guard sTag + 2 + sLength == der.count else { return nil }
        return (fixed32(Array(der[4..<sTag])), fixed32(Array(der[(sTag + 2)...])))
    }

    static func encode(r: [UInt8], s: [UInt8]) -> [UInt8] {
        let rInt = integer(r), sInt = integer(s)
        let body = [0x02, UInt8(rInt.count)] + rInt + [0x02, UInt8(sInt.count)] + sInt
        return [0x30, UInt8(body.count)] + body
    }

    /// Minimal two's-complement big-endian INTEGER contents for a non-negative value.
    static func integer(_ value: [UInt8]) -> [UInt8] {
        var bytes = Array(value.drop { $0 == 0 })
        if bytes.isEmpty { bytes = [0] }
        if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return bytes
    }

    static func fixed32(_ value: [UInt8]) -> [UInt8] {
        let trimmed = Array(value.drop { $0 == 0 })
        return [UInt8](repeating: 0, count: 32 - trimmed.count) + trimmed
    }

    /// a - b for 32-byte big-endian values with a >= b.
    static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for i in stride(from: 31, through: 0, by: -1) {
            var digit = Int(a[i]) - Int(b[i]) - borrow
            borrow = digit < 0 ? 1 : 0
            if digit < 0 { digit += 256 }
            out[i] = UInt8(digit)
        }
        return out
    }

    /// Whether s > n/2 (a "high-S" signature), by comparing 2s with n.
    static func isHigh(_ s: [UInt8]) -> Bool {
        let half = TestDER.halfOrder
        return s.lexicographicallyPrecedes(half) == false && s != half
    }

    /// floor(n / 2), big-endian.
    static let halfOrder: [UInt8] = {
        var out = [UInt8](repeating: 0, count: 32)
        var carry: UInt8 = 0
        for i in 0..<32 {
            out[i] = (order[i] >> 1) | (carry << 7)
            carry = order[i] & 1
        }
        return out
    }()
}
