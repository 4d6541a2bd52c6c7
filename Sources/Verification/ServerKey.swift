import ServiceKit

/// The key under which codes and payloads are hashed. From `--verification-key` /
/// `LATCHKEY_VERIFICATION_KEY` (64+ hex digits, or 32+ bytes of text), else generated once into
/// a 0600 file in the data directory and read back on every start.
public enum ServerKey {
    public static func load(configuration: Configuration, keyFile: String) throws -> [UInt8] {
        try ServerKeyFile.load(path: keyFile, configured: configuration.string(VerificationOptions.key), option: "--verification-key")
    }
}
