import Foundation
import Secrets

/// Session ids that sort by creation: `ses_`, 14 lowercase hex digits of a microsecond clock that
/// never repeats or goes back within a process, then 12 random bytes (base64url). `created_at`
/// counts whole seconds; `identity.sessions` breaks its ties with this id, so sessions made
/// within one second still list newest first. Hex digits sort alike bytewise and under any
/// database collation; the random tail keeps ids from two replicas apart.
final class SessionIDs: @unchecked Sendable {
    static let shared = SessionIDs()

    private let lock = NSLock()
    private var lastMicroseconds: Int64 = 0

    func next(nowMicroseconds: Int64 = Int64(Date().timeIntervalSince1970 * 1_000_000)) -> String {
        lock.lock()
        lastMicroseconds = max(lastMicroseconds + 1, nowMicroseconds)
        let stamp = lastMicroseconds
        lock.unlock()
        let hex = String(stamp, radix: 16)
        return "ses_" + String(repeating: "0", count: max(0, 14 - hex.count)) + hex + Base64URL.encode(SecureRandom.bytes(12))
    }
}
