import Foundation
import Secrets

/// Plays the person's authenticator app in the tests: RFC 6238 TOTP (HMAC-SHA-1, 6 digits,
/// 30 s steps) over the Base32 secret `identity.totp_enroll` answered. Written here, apart from
/// identity's implementation and outside the client (which never computes codes).
struct AuthenticatorApp {
    let secret: [UInt8]

    init?(base32 secret: String) {
        guard let bytes = Self.base32Decode(secret), !bytes.isEmpty else { return nil }
        self.secret = bytes
    }

    init(secret: [UInt8]) { self.secret = secret }

    /// The 30-second step `date` falls in.
    static func step(at date: Date) -> UInt64 { UInt64(date.timeIntervalSince1970) / 30 }

    /// The code of `step` (RFC 4226 HOTP with the step as counter, dynamic truncation).
    func code(step: UInt64, digits: Int = 6) -> String {
        let counter = (0..<8).map { UInt8(truncatingIfNeeded: step >> (56 - 8 * UInt64($0))) }
        let mac = HMACAlgorithm.sha1.authenticate(counter, key: secret)
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary = UInt32(mac[offset] & 0x7f) << 24 | UInt32(mac[offset + 1]) << 16 | UInt32(mac[offset + 2]) << 8 | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let digitsText = String(binary % modulus)
        return String(repeating: "0", count: digits - digitsText.count) + digitsText
    }

    /// RFC 4648 Base32 (A-Z, 2-7), case-insensitive, padding optional.
    static func base32Decode(_ text: String) -> [UInt8]? {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var bytes: [UInt8] = []
        var buffer: UInt32 = 0, bits = 0
        for character in text.uppercased() where character != "=" {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            buffer = buffer << 5 | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        return bytes
    }
}
