import FoundationEssentials
import Platform
import Secrets

/// Device keys parsed once. Building and checking a P-256 point from its bytes cost about 100 µs
/// here, as much as checking a signature, and identity did it on every device-key login and
/// every transfer a device key confirmed. Entries are keyed by the point's own bytes, so one can
/// never stand for another key; which key is a device's active one, and whether it is revoked,
/// is still read from the database on every check. Holds at most `capacity` keys and starts
/// over when full. Thread-safe.
final class ParsedKeyCache: @unchecked Sendable {
    let capacity: Int
    private let lock = Lock()
    // Guarded by `lock`.
    private var keys: [[UInt8]: P256PublicKey] = [:]
    private var parseCount = 0

    init(capacity: Int = 1024) {
        precondition(capacity >= 1)
        self.capacity = capacity
    }

    /// The parsed key; throws as `P256PublicKey(x963:)` does (a refused point is not kept).
    func key(x963: [UInt8]) throws(SecretsError) -> P256PublicKey {
        if let cached = lock.withLock({ keys[x963] }) { return cached }
        let parsed = try P256PublicKey(x963: x963)  // outside the lock: other keys need not wait
        lock.withLock {
            parseCount += 1
            if keys.count >= capacity { keys.removeAll(keepingCapacity: true) }
            keys[x963] = parsed
        }
        return parsed
    }

    /// Points parsed so far, and keys held now (tests).
    var statistics: (parsed: Int, held: Int) { lock.withLock { (parseCount, keys.count) } }
}
