/// Four random bytes as hex: what distinguishes a process's request ids from those of its
/// earlier runs (not a secret).
public enum Hex8 {
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(UInt32.random(in: .min ... .max, using: &generator), radix: 16)
    }
}
