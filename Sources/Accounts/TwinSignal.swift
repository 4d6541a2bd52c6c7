import Platform

/// Wakes twins (requests with the same idempotency key) waiting for the first one to attach its
/// code. In-process only: a twin on another replica notices on its next look (the wait is bounded).
/// A twin waits suspended, holding no worker thread: the first one's own answer from
/// verification needs a thread to go on, and twenty twins must not hold them all.
final class TwinSignal: @unchecked Sendable {
    private let lock = Lock()
    private var generation: UInt64 = 0
    private var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    private var nextWaiter: UInt64 = 0

    /// The current generation: read it before looking, pass it to `wait` after.
    var current: UInt64 { lock.withLock { generation } }

    /// Some reservation changed (its code attached, or it was released).
    func wake() {
        let woken = lock.withLock {
            generation &+= 1
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }
        for waiter in woken { waiter.resume() }
    }

    /// Returns once a wake comes after `seen`, or after `timeoutMilliseconds`.
    func wait(after seen: UInt64, timeoutMilliseconds: Int64) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let id: UInt64? = lock.withLock {
                guard generation == seen else { return nil }
                nextWaiter &+= 1
                waiters[nextWaiter] = continuation
                return nextWaiter
            }
            guard let id else { return continuation.resume() }
            Task {
                try? await Task.sleep(for: .milliseconds(timeoutMilliseconds))
                self.lock.withLock { self.waiters.removeValue(forKey: id) }?.resume()
            }
        }
    }
}
