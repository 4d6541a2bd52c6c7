import COpenSSL

/// OpenSSL's CSPRNG (RAND_bytes). Failures are fatal: there is no safe fallback.
public enum SecureRandom {
    /// `count` bytes from RAND_bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0, "SecureRandom.bytes: negative count")
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBufferPointer { buffer in
            var offset = 0
            while offset < buffer.count {
                let chunk = min(buffer.count - offset, 1 << 20)
                guard RAND_bytes(buffer.baseAddress! + offset, Int32(chunk)) == 1 else {
                    fatalOpenSSL("SecureRandom: RAND_bytes failed")
                }
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
        var value: UInt64 = 0
        let rc = withUnsafeMutableBytes(of: &value) { raw in
            RAND_bytes(raw.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(raw.count))
        }
        guard rc == 1 else { fatalOpenSSL("SecureRandom: RAND_bytes failed") }
        return value
    }
}
