import Runtime

/// The gateway's periodic work, in an object no request touches. The loop keeps its timers
/// forever, so they hold their target weakly; a weak reference gives its target a side table,
/// after which every retain and release of that object takes the runtime's slow path. Held
/// weakly, this object pays that instead of the gateway and the access log, which every
/// request retains.
final class GatewayHousekeeping: @unchecked Sendable {
    let pools: [ServicePool]
    let sessions: SessionCache
    let limiter: RateLimiter
    let accessLog: AccessLog

    init(pools: [ServicePool], sessions: SessionCache, limiter: RateLimiter, accessLog: AccessLog) {
        self.pools = pools
        self.sessions = sessions
        self.limiter = limiter
        self.accessLog = accessLog
    }

    func start(on loop: EventLoop, settings: GatewaySettings) {
        loop.scheduleRepeating(everyMilliseconds: 100) { [weak self] in self?.accessLog.flush() }
        for pool in pools { pool.probe() }
        loop.scheduleRepeating(everyMilliseconds: settings.healthIntervalMilliseconds) { [weak self] in
            for pool in self?.pools ?? [] { pool.probe() }
        }
        loop.scheduleRepeating(everyMilliseconds: settings.resolveIntervalMilliseconds) { [weak self] in
            for pool in self?.pools ?? [] { pool.refreshAddresses() }
        }
        loop.scheduleRepeating(everyMilliseconds: 10_000) { [weak self] in
            self?.sessions.prune()
            self?.limiter.prune()
        }
    }
}
