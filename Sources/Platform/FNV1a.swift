/// FNV-1a over bytes, folded to an `Int`: the hash of the start-up tables looked up by name on
/// every request (methods, a result's columns). Not seeded: only for tables whose keys are fixed
/// before any caller's input is looked up in them, where a caller's made-up name only probes.
public enum FNV1a {
    @inlinable
    public static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return Int(truncatingIfNeeded: hash ^ (hash >> 29))
    }
}
