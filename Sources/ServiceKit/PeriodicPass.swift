import Platform

/// Work a service does again and again in the background (following identity's records): a
/// pass runs on a worker every interval, never two at once; a tick that finds one still
/// running is skipped.
public final class PeriodicPass: @unchecked Sendable {
    private let lock = Lock()
    private var running = false
    private let pass: @Sendable () -> Void

    public init(_ pass: @escaping @Sendable () -> Void) { self.pass = pass }

    public func start(on host: ServiceHost, everyMilliseconds interval: Int64) {
        host.loop.scheduleRepeating(everyMilliseconds: interval) { [self] in
            guard claim() else { return }
            if !host.workers.submit({ [self] in
                pass()
                release()
            }) {
                release()
            }
        }
    }

    private func claim() -> Bool {
        lock.withLock {
            if running { return false }
            running = true
            return true
        }
    }

    private func release() { lock.withLock { running = false } }
}
