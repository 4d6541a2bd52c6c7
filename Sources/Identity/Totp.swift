import Secrets

/// RFC 6238 time-based one-time passwords (RFC 4226 HOTP over a time step). Pure: the secret,
/// the time and the parameters in, a code out.
public struct TotpParameters: Sendable, Equatable {
    public var algorithm: HMACAlgorithm
    public var digits: Int
    public var periodSeconds: Int64

    public init(algorithm: HMACAlgorithm = .sha1, digits: Int = 6, periodSeconds: Int64 = 30) {
        precondition((6...8).contains(digits) && periodSeconds >= 1)
        self.algorithm = algorithm
        self.digits = digits
        self.periodSeconds = periodSeconds
    }

    /// What every authenticator app understands (Google Authenticator ignores other values).
    public static let standard = TotpParameters()
}

public enum Totp {
    /// The time step holding `unixSeconds` (T0 = 0).
    public static func step(at unixSeconds: Int64, _ parameters: TotpParameters) -> Int64 {
        unixSeconds / parameters.periodSeconds
    }

    /// HOTP(secret, step): HMAC of the 8-byte big-endian counter, dynamic truncation, decimal.
    public static func code(secret: [UInt8], step: Int64, _ parameters: TotpParameters) -> String {
        let counter = (0..<8).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: step) >> (56 - 8 * UInt64($0))) }
        let mac = parameters.algorithm.authenticate(counter, key: secret)
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary = UInt32(mac[offset] & 0x7f) << 24 | UInt32(mac[offset + 1]) << 16 | UInt32(mac[offset + 2]) << 8 | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<parameters.digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: parameters.digits - value.count) + value
    }

    /// The newest step within `skewSteps` of now, and after `after`, whose code is `code`; nil
    /// when none. Every candidate is computed and compared in constant time, so the time taken
    /// says nothing about which step (if any) matched. A step at or before `after` (a code
    /// already accepted) never matches: that is what refuses a replay within its window.
    public static func matchingStep(
        code: String, secret: [UInt8], now: Int64, after: Int64, skewSteps: Int64, _ parameters: TotpParameters
    ) -> Int64? {
        let given = Array(code.utf8)
        let current = step(at: now, parameters)
        var matched: Int64?
        for candidate in (current - skewSteps)...(current + skewSteps) {
            let equal = constantTimeEquals(Array(Totp.code(secret: secret, step: candidate, parameters).utf8), given)
            if equal && candidate > after { matched = candidate }
        }
        return matched
    }
}
