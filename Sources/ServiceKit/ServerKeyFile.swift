import FoundationEssentials
import Platform
import Secrets

/// A service's own secret key (for keyed hashes): the configured text when given (64+ hex
/// digits, or 32+ bytes of text), else generated once into a 0600 file in the data directory
/// and read back on every start. Verification and reset keep their keys this way.
public enum ServerKeyFile {
    /// `configured` is the option's value (nil or empty: use the file); `option` names the flag in errors.
    /// `load` for a service whose replicas may share a PostgreSQL database (`shared`): there each
    /// must be given the same key, since a key file of its own would differ from the others'
    /// (`consequence` says what would break, for the error).
    public static func load(path: String, configured: String?, option: String, shared: Bool, service: String, consequence: String) throws -> [UInt8] {
        if shared && (configured ?? "").isEmpty {
            throw ConfigurationError("with --database-url every \(service) replica needs the same \(option) (64+ hex digits): \(consequence)")
        }
        return try load(path: path, configured: configured, option: option)
    }

    public static func load(path: String, configured: String?, option: String) throws -> [UInt8] {
        if let configured, !configured.isEmpty {
            return try parse(configured, option: option)
        }
        if let existing = FileManager.default.contents(atPath: path) {
            return try parse(String(decoding: existing, as: UTF8.self).trimmingWhitespace(), option: option)
        }
        var key = SecureRandom.bytes(32)
        defer { secureWipe(&key) }
        let text = Array((Hex.encode(key) + "\n").utf8)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 && errno == EEXIST {
            // Another process of this replica won the race: use its key.
            return try load(path: path, configured: nil, option: option)
        }
        guard fd >= 0 else { throw ConfigurationError("cannot create \(path) (errno \(errno))") }
        defer { close(fd) }
        let written = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == text.count, fsync(fd) == 0 else { throw ConfigurationError("cannot write \(path) (errno \(errno))") }
        return key
    }

    static func parse(_ text: String, option: String) throws -> [UInt8] {
        if text.utf8.count >= 64, text.utf8.count % 2 == 0, let bytes = Hex.decode(text) { return bytes }
        guard text.utf8.count >= 32 else {
            throw ConfigurationError("\(option) must be 64+ hex digits or at least 32 bytes of text")
        }
        return Array(text.utf8)
    }
}
