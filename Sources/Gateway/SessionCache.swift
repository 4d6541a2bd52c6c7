import FoundationEssentials
import LineProtocol
import Platform
import Secrets
import ServiceKit

/// Introspection answers keyed by SHA-256 of the session token (the token itself is never
/// kept), each for at most `ttlMilliseconds`, bounded in size. Thread-safe.
public final class SessionCache: @unchecked Sendable {
    private struct Entry {
        let info: SessionInfo
        let storedMilliseconds: Int64
    }

    public let ttlMilliseconds: Int64
    public let maxEntries: Int
    private let lock = Lock()
    private var entries: [[UInt8]: Entry] = [:]

    public init(ttlMilliseconds: Int64, maxEntries: Int = 100_000) {
        precondition(ttlMilliseconds >= 0 && maxEntries > 0)
        self.ttlMilliseconds = ttlMilliseconds
        self.maxEntries = maxEntries
    }

    public static func key(forToken token: String) -> [UInt8] { SHA256.hash(token) }

    public func lookup(token: String, nowMilliseconds: Int64 = MonotonicClock.nowMilliseconds()) -> SessionInfo? {
        guard ttlMilliseconds > 0 else { return nil }
        let key = Self.key(forToken: token)
        lock.lock()
        defer { lock.unlock() }
        guard let entry = entries[key] else { return nil }
        let expiredBySession = entry.info.expiresAt <= WallClock.nowSeconds()
        if nowMilliseconds - entry.storedMilliseconds >= ttlMilliseconds || expiredBySession {
            entries.removeValue(forKey: key)
            return nil
        }
        return entry.info
    }

    public func store(token: String, info: SessionInfo, nowMilliseconds: Int64 = MonotonicClock.nowMilliseconds()) {
        guard ttlMilliseconds > 0 else { return }
        let key = Self.key(forToken: token)
        lock.lock()
        defer { lock.unlock() }
        if entries.count >= maxEntries { pruneLocked(nowMilliseconds: nowMilliseconds) }
        if entries.count >= maxEntries { entries.removeAll(keepingCapacity: true) }
        entries[key] = Entry(info: info, storedMilliseconds: nowMilliseconds)
    }

    /// Drops the entry of one token (logout, aal change).
    public func drop(token: String) {
        let key = Self.key(forToken: token)
        lock.lock()
        entries.removeValue(forKey: key)
        lock.unlock()
    }

    /// Drops every entry of one session id (revoke by id).
    public func drop(sessionID: String) {
        lock.lock()
        entries = entries.filter { $0.value.info.sessionID != sessionID }
        lock.unlock()
    }

    public var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }

    /// Removes stale entries; called from a timer so memory follows traffic.
    public func prune(nowMilliseconds: Int64 = MonotonicClock.nowMilliseconds()) {
        lock.lock()
        pruneLocked(nowMilliseconds: nowMilliseconds)
        lock.unlock()
    }

    private func pruneLocked(nowMilliseconds: Int64) {
        entries = entries.filter { nowMilliseconds - $0.value.storedMilliseconds < ttlMilliseconds }
    }
}
