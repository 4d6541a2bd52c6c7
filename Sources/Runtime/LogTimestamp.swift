import FoundationEssentials
import Glibc

/// A log line's `ts` (and the access log's): UTC to the millisecond, `2026-12-01T00:35:13.304Z`,
/// written digit by digit.
public enum LogTimestamp {
    public static func format(unixMilliseconds milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds.dividedFloor(by: 1000))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let fraction = Int(milliseconds - Int64(seconds) * 1000)
        return String(unsafeUninitializedCapacity: 24) { buffer in
            var index = 0
            func put(_ value: Int, digits: Int) {
                var remaining = value
                for offset in stride(from: digits - 1, through: 0, by: -1) {
                    buffer[index + offset] = UInt8(ascii: "0") + UInt8(remaining % 10)
                    remaining /= 10
                }
                index += digits
            }
            func put(_ character: Unicode.Scalar) {
                buffer[index] = UInt8(ascii: character)
                index += 1
            }
            put(Int(parts.tm_year) + 1900, digits: 4)
            put("-")
            put(Int(parts.tm_mon) + 1, digits: 2)
            put("-")
            put(Int(parts.tm_mday), digits: 2)
            put("T")
            put(Int(parts.tm_hour), digits: 2)
            put(":")
            put(Int(parts.tm_min), digits: 2)
            put(":")
            put(Int(parts.tm_sec), digits: 2)
            put(".")
            put(fraction, digits: 3)
            put("Z")
            return index
        }
    }
}

extension LogTimestamp {
    /// `2026-12-04 18:20` (or `2026-12-04 18:20:05` with seconds), UTC: for people, in mails and tables.
    public static func readable(unixSeconds seconds: Int64, withSeconds: Bool) -> String {
        let stamp = format(unixMilliseconds: seconds * 1000)
        return stamp.prefix(10) + " " + stamp.dropFirst(11).prefix(withSeconds ? 8 : 5)
    }
}

extension Int64 {
    /// Division rounding toward minus infinity, so an instant before 1970 keeps a fraction in 0...999.
    fileprivate func dividedFloor(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor < 0) ? quotient - 1 : quotient
    }
}
