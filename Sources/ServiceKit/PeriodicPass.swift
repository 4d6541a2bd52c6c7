import Contract
import Platform
import RPC
import Runtime

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

extension PeriodicPass {
    /// Starts `pass` every `--erasure-poll-ms`: the pace of every pass that follows identity's
    /// records (erasures, phone notices).
    public static func followingIdentity(on host: ServiceHost, _ pass: @escaping @Sendable () -> Void) throws {
        let interval = Int64(try host.configuration.int(ErasureFollower.pollMilliseconds, range: 10...60_000))
        PeriodicPass(pass).start(on: host, everyMilliseconds: interval)
    }

    /// The context of one pass's calls: no end client, ten seconds for the whole pass.
    public static func callContext(_ method: MethodContract, requestID: String, logger: Logger) -> CallContext {
        CallContext(method: method.name, requestID: requestID, client: nil, logger: logger, deadlineMilliseconds: MonotonicClock.nowMilliseconds() + 10_000)
    }
}
