import ServiceKit

/// The key under which codes and payloads are hashed. From `--verification-key` /
/// `LATCHKEY_VERIFICATION_KEY` (64+ hex digits, or 32+ bytes of text), else generated once into
/// a 0600 file in the data directory and read back on every start. Replicas that share a
/// PostgreSQL database (`shared`) must be given the same key: any of them sends a code that
/// another checks, and the key never goes into the database, which alone must not reveal codes.
public enum ServerKey {
    public static func load(configuration: Configuration, keyFile: String, shared: Bool = false) throws -> [UInt8] {
        try ServerKeyFile.load(
            path: keyFile, configured: configuration.string(VerificationOptions.key), option: "--verification-key", shared: shared,
            service: "verification", consequence: "a key file of its own would make its codes fail on the others")
    }
}
