import FoundationEssentials
import Platform

/// Ids that sort by creation: a prefix, 14 lowercase hex digits of a microsecond clock that never
/// repeats or goes back within a process, then random bytes (base64url). Hex digits sort alike
/// bytewise and under any database collation, and the random tail keeps ids unguessable and
/// apart across replicas.
///
/// Why sorted: a row keyed by a random id lands on a random leaf of its index, so every write
/// dirties a page of its own (a WAL frame in SQLite, a page image in PostgreSQL). Ids issued in
/// order share the newest leaf, and concurrent writes committed together share its page.
public final class SortableIDs: @unchecked Sendable {
    public static let shared = SortableIDs()

    private let lock = Lock()
    private var lastMicroseconds: Int64 = 0

    /// 14 lowercase hex digits of the clock, each later than the last this process gave.
    public func stamp(nowMicroseconds: Int64 = Int64(Date().timeIntervalSince1970 * 1_000_000)) -> String {
        lock.lock()
        lastMicroseconds = max(lastMicroseconds + 1, nowMicroseconds)
        let stamp = lastMicroseconds
        lock.unlock()
        let hex = String(stamp, radix: 16)
        return String(repeating: "0", count: max(0, 14 - hex.count)) + hex
    }

    /// `prefix`, the stamp, then `randomBytes` random bytes in base64url.
    public func next(prefix: String, randomBytes: Int) -> String {
        prefix + stamp() + Base64URL.encode(SecureRandom.bytes(randomBytes))
    }
}
