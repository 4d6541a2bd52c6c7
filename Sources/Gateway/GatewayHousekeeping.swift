import Runtime

/// The gateway's periodic work, in an object no request touches. Its timers hold it weakly and
/// are cancelled when it is let go; a weak reference gives its target a side table, after which
/// every retain and release of that object takes the runtime's slow path. Held weakly, this
/// object pays that instead of the gateway and the access log, which every request retains.
final class GatewayHousekeeping: @unchecked Sendable {
    let pools: [ServicePool]
    let sessions: SessionCache
    let limiter: RateLimiter
    let accessLog: AccessLog
    private var timers: [RepeatingTimerHandle] = []

    init(pools: [ServicePool], sessions: SessionCache, limiter: RateLimiter, accessLog: AccessLog) {
        self.pools = pools
        self.sessions = sessions
        self.limiter = limiter
        self.accessLog = accessLog
    }

    deinit {
        for timer in timers { timer.cancel() }
    }

    func start(on loop: EventLoop, settings: GatewaySettings) {
        timers.append(loop.scheduleRepeating(everyMilliseconds: 100) { [weak self] in self?.accessLog.flush() })
        for pool in pools { pool.probe() }
        timers.append(loop.scheduleRepeating(everyMilliseconds: settings.healthIntervalMilliseconds) { [weak self] in
            for pool in self?.pools ?? [] { pool.probe() }
        })
        timers.append(loop.scheduleRepeating(everyMilliseconds: settings.resolveIntervalMilliseconds) { [weak self] in
            for pool in self?.pools ?? [] { pool.refreshAddresses() }
        })
        timers.append(loop.scheduleRepeating(everyMilliseconds: 10_000) { [weak self] in
            self?.sessions.prune()
            self?.limiter.prune()
        })
    }
}
