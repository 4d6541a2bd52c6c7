/// Where a run of string bytes that need no attention ends, found eight bytes at a time (one
/// 64-bit word: a few arithmetic steps per word, where a loop compared each byte three or four
/// times). A byte needs attention when it is `"`, `\`, a control character (below 0x20), or,
/// when `nonASCII` is true, any byte from 0x80 up (the parser validates UTF-8 there; the
/// encoder passes it through).
enum PlainRun {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The index of the first byte from `start` on that needs attention, or `bytes.count`.
    @inline(__always)
    static func end(in bytes: UnsafeBufferPointer<UInt8>, from start: Int, stoppingAtNonASCII nonASCII: Bool) -> Int {
        var index = start
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while index + 8 <= bytes.count {
                let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                let flags = attention(word, nonASCII: nonASCII)
                // Each test flags the byte that needs attention and, through a borrow, maybe
                // some after it: never one before it. The lowest flag is the first such byte.
                if flags != 0 { return index + flags.trailingZeroBitCount / 8 }
                index += 8
            }
        }
        while index < bytes.count, !needsAttention(bytes[index], nonASCII: nonASCII) { index += 1 }
        return index
    }

    @inline(__always)
    private static func attention(_ word: UInt64, nonASCII: Bool) -> UInt64 {
        let control = (word &- ones &* 0x20) & ~word
        let quote = zeroBytes(word ^ (ones &* 0x22))
        let backslash = zeroBytes(word ^ (ones &* 0x5C))
        return (control | quote | backslash | (nonASCII ? word : 0)) & highBits
    }

    /// High bit set in each byte of `word` that is zero (and maybe in bytes above one).
    @inline(__always)
    private static func zeroBytes(_ word: UInt64) -> UInt64 { (word &- ones) & ~word }

    @inline(__always)
    static func needsAttention(_ byte: UInt8, nonASCII: Bool) -> Bool {
        byte < 0x20 || byte == ASCII.quote || byte == ASCII.backslash || (nonASCII && byte >= 0x80)
    }
}
