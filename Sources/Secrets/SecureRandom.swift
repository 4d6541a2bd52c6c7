/// The operating system's CSPRNG through the standard library's `SystemRandomNumberGenerator`
/// (`getrandom(2)` on Linux, `arc4random_buf` on Darwin): no user-space generator to seed, fork
/// or wipe, and the standard library stops the process if the kernel cannot supply bytes (there
/// is no safe fallback). Not OpenSSL's `RAND_bytes`: setting up its generator on first use kept
/// 2 MB of libcrypto resident in every process that drew a random byte.
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0, "SecureRandom.bytes: negative count")
        var generator = SystemRandomNumberGenerator()
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let word = generator.next()
                let chunk = min(8, buffer.count - offset)
                withUnsafeBytes(of: word) { buffer.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: chunk) }
                offset += chunk
            }
        }
        return out
    }

    /// A uniformly distributed integer in `0..<upperBound`: draws 64 random bits, masks them to
    /// the smallest power of two covering the range and retries when the draw is out of range
    /// (rejection sampling: no modulo bias; under two draws on average).
    public static func uniform(below upperBound: UInt64) -> UInt64 {
        precondition(upperBound > 0, "SecureRandom.uniform: upperBound must be > 0")
        if upperBound == 1 { return 0 }
        let mask = UInt64.max >> (upperBound - 1).leadingZeroBitCount
        while true {
            let candidate = random64() & mask
            if candidate < upperBound { return candidate }
        }
    }

    /// `count` decimal digits, each uniform in 0...9; leading zeros allowed (one-time codes).
    public static func digits(_ count: Int) -> String {
        precondition(count >= 0, "SecureRandom.digits: negative count")
        var ascii = [UInt8]()
        ascii.reserveCapacity(count)
        for _ in 0..<count { ascii.append(UInt8(ascii: "0") + UInt8(uniform(below: 10))) }
        return String(decoding: ascii, as: UTF8.self)
    }

    private static func random64() -> UInt64 {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }
}
