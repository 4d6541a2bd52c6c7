import Foundation
import Glibc
import Secrets
import ServiceKit

/// The key under which codes and payloads are hashed. From `--verification-key` /
/// `LATCHKEY_VERIFICATION_KEY` (64+ hex digits, or 32+ bytes of text), else generated once into
/// a 0600 file in the data directory and read back on every start.
public enum ServerKey {
    public static func load(configuration: Configuration, keyFile: String) throws -> [UInt8] {
        if let text = configuration.string(VerificationOptions.key), !text.isEmpty {
            return try parse(text)
        }
        if let existing = FileManager.default.contents(atPath: keyFile) {
            return try parse(String(decoding: existing, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        var key = SecureRandom.bytes(32)
        defer { secureWipe(&key) }
        let text = Array((Hex.encode(key) + "\n").utf8)
        let fd = open(keyFile, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 && errno == EEXIST {
            // Another process of this replica won the race: use its key.
            return try load(configuration: configuration, keyFile: keyFile)
        }
        guard fd >= 0 else { throw ConfigurationError("cannot create \(keyFile) (errno \(errno))") }
        defer { close(fd) }
        let written = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == text.count, fsync(fd) == 0 else { throw ConfigurationError("cannot write \(keyFile) (errno \(errno))") }
        return key
    }

    static func parse(_ text: String) throws -> [UInt8] {
        if text.utf8.count >= 64, text.utf8.count % 2 == 0, let bytes = Hex.decode(text) { return bytes }
        guard text.utf8.count >= 32 else {
            throw ConfigurationError("--verification-key must be 64+ hex digits or at least 32 bytes of text")
        }
        return Array(text.utf8)
    }
}
