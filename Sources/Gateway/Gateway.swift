import FoundationEssentials
import LineProtocol
import Platform
import RPC
import Runtime
import ServiceKit

/// The gateway's tunables, each with its unit. Read from configuration in `GatewayProcess`.
public struct GatewaySettings: Sendable {
    /// How long an introspection answer is reused (0 disables the cache).
    public var sessionCacheMilliseconds: Int64 = 2000
    /// Upper bound on one forwarded call (the request deadline may be shorter).
    public var upstreamTimeoutMilliseconds: Int64 = 5000
    public var healthIntervalMilliseconds: Int64 = 1000
    public var healthTimeoutMilliseconds: Int64 = 1000
    public var resolveIntervalMilliseconds: Int64 = 5000
    public var connectionsPerReplica = 2
    /// Forward attempts per request when retrying is safe (first try included).
    public var maxAttempts = 3
    public var rateLimits = RateLimits.defaults
    /// Sent as `meta.token` to every service when set (`--service-token`); never accepted from clients.
    public var serviceToken: String?

    public init() {}
}

/// The one dispatch path behind every public door (the line protocol today; HTTP later):
/// policy, rate limits, session checks, forwarding with failover, metrics and the access log.
/// A door builds a `CallContext` (client address, fresh request id, deadline) and calls `dispatch`.
public final class Gateway: RPCDispatcher, @unchecked Sendable {
    public let settings: GatewaySettings
    public let pools: [String: ServicePool]
    public let metrics: Metrics
    public let sessions: SessionCache
    public let limiter: RateLimiter
    public let accessLog: AccessLog
    private let logger: Logger
    /// What the timers reach, held weakly by them and strongly only here.
    private let housekeeping: GatewayHousekeeping
    private let routes: LoopLocal<MethodRoute.Table>

    public init(pools: [String: ServicePool], settings: GatewaySettings, metrics: Metrics, logger: Logger, accessLog: AccessLog) {
        self.pools = pools
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
        self.accessLog = accessLog
        sessions = SessionCache(ttlMilliseconds: settings.sessionCacheMilliseconds)
        limiter = RateLimiter(limits: settings.rateLimits)
        housekeeping = GatewayHousekeeping(pools: Array(pools.values), sessions: sessions, limiter: limiter, accessLog: accessLog)
        let limiter = self.limiter
        routes = LoopLocal(loopParts: Self.loopParts) { part in
            MethodRoute.Table(pools: pools, loopPart: part, of: Self.loopParts, limiter: limiter, metrics: metrics, accessLog: accessLog)
        }
    }

    /// Builds the pools for `endpoints` (service -> replicas) and starts health checks, DNS
    /// refreshes and cache pruning on the main loop's timers. Each loop of `group` gets its own
    /// upstream clients, so a request is forwarded and answered on the loop that received it.
    /// How many loops get routes of their own (more share them).
    private static let loopParts = 16

    public static func make(
        group: EventLoopGroup, endpoints: [String: [Endpoint]], settings: GatewaySettings, metrics: Metrics, logger: Logger, accessLog: AccessLog
    ) -> Gateway {
        let loop = group.main
        var pools: [String: ServicePool] = [:]
        for service in PolicyTable.services {
            guard let list = endpoints[service], !list.isEmpty else { continue }
            let resolved = RPCClient.resolve(list)
            let clients = group.loops.map { loop in
                RPCClient(
                    loop: loop, service: service, endpoints: list, resolved: resolved, connectionsPerAddress: settings.connectionsPerReplica,
                    serviceToken: settings.serviceToken, logger: logger)
            }
            pools[service] = ServicePool(
                service: service, clients: clients, healthTimeoutMilliseconds: settings.healthTimeoutMilliseconds, logger: logger)
        }
        let gateway = Gateway(pools: pools, settings: settings, metrics: metrics, logger: logger, accessLog: accessLog)
        gateway.housekeeping.start(on: loop, settings: settings)
        return gateway
    }

    /// A gateway on one loop (tests).
    public static func make(
        loop: EventLoop, endpoints: [String: [Endpoint]], settings: GatewaySettings, metrics: Metrics, logger: Logger, accessLog: AccessLog
    ) -> Gateway {
        make(group: EventLoopGroup(loop: loop), endpoints: endpoints, settings: settings, metrics: metrics, logger: logger, accessLog: accessLog)
    }

    // MARK: Doors

    private let contextLock = Lock()
    private var contextCounter: UInt64 = 0
    private let contextIDs = RequestIDIssuer(prefix: "gw-\(Hex8.random())-", connection: nil, client: nil)

    /// A call context for a door that is not an `RPCServer` (the HTTP listener): the peer's
    /// address as the client, a fresh gateway-issued request id, and a deadline. The line
    /// listener gets the same from `RPCServer` (with `trustsCallerMeta: false`).
    public func makeContext(method: String, client: String?, timeoutMilliseconds: Int64) -> CallContext {
        contextLock.lock()
        contextCounter &+= 1
        let requestID = RequestID(issuer: contextIDs, request: contextCounter)
        contextLock.unlock()
        return CallContext(
            method: method, id: requestID, client: client, logger: logger,
            deadlineMilliseconds: MonotonicClock.nowMilliseconds() + timeoutMilliseconds)
    }

    // MARK: Dispatch

    /// For doors that read the answer (HTTP): a result passed through is decoded here.
    public func dispatch(_ request: RPCRequest, context: CallContext, reply: @escaping @Sendable (Result<JSON, RPCError>) -> Void) {
        dispatch(request, context: context) { (answer: RPCReply) in
            switch answer {
            case .outcome(let outcome): reply(outcome)
            case .encodedResult(let result): reply(.success(result.decoded()))
            }
        }
    }

    /// The line door: a service's result goes back to the client as the bytes the service wrote
    /// (checked by the parser's rules when they arrived), only the `id` rewritten.
    public func dispatch(_ request: RPCRequest, context: CallContext, replying reply: @escaping @Sendable (RPCReply) -> Void) {
        let loopRoutes = routes.current
        let route = loopRoutes.route(for: request.method)
        let policy = route.policy
        let finish = Finisher(started: MonotonicClock.nowMicroseconds(), route: route, requestID: context.id, client: context.client, reply: reply)
        // Every request spends a token before anything else, an unknown method too.
        if !route.isUnlimited, let wait = limiter.take(client: context.client ?? "unknown", group: route.rateLimitGroup) {
            finish.fail(Self.rateLimited(retryAfterSeconds: wait))
            return
        }
        guard let policy else {
            finish.fail(.methodNotFound(request.method))
            return
        }
        if policy.isLocal {
            do throws(RPCError) {
                try policy.form.check(try Params(request.params).members, method: request.method)
            } catch {
                finish.fail(error)
                return
            }
            finish(answerLocally(route.name, pong: loopRoutes.pong))
            return
        }
        let members = request.params?.objectValue ?? [:]
        guard policy.access != .open else {
            forward(request, policy: policy, pool: route.pool, members: members, token: nil, context: context, finish: finish)
            return
        }
        guard let token = members["session"]?.stringValue, !token.isEmpty, token.utf8.count <= 1024 else {
            finish.fail(Self.unauthenticated)
            return
        }
        let decide: @Sendable (Result<SessionInfo, RPCError>) -> Void = { [self] outcome in
            switch outcome {
            case .failure(let error):
                finish.fail(error)
            case .success(let info):
                if let refusal = info.refusal(for: policy.access, nowSeconds: WallClock.nowSeconds()) {
                    finish.fail(refusal)
                } else if route.composesParts {
                    composeExport(request, userID: info.userID, services: loopRoutes.services, context: context, finish: finish)
                } else {
                    forward(request, policy: policy, pool: route.pool, members: members, token: token, context: context, finish: finish)
                }
            }
        }
        // A cached answer may be stale (a factor passed elsewhere): refuse only on a fresh one.
        if let cached = sessions.lookup(token: token), cached.refusal(for: policy.access, nowSeconds: WallClock.nowSeconds()) != nil {
            sessions.drop(token: token)
        }
        resolveSession(token: token, identity: loopRoutes.identity, context: context, completion: decide)
    }

    static let unauthenticated = RPCError(.unauthenticated, "a valid session is required")

    /// What every answer of one request goes through on its way to the door: metrics, then the
    /// access log. A value, so a request answered at once (a ping, a refusal) allocates no closure.
    struct Finisher: Sendable {
        let started: Int64
        let route: MethodRoute
        let requestID: RequestID
        let client: String?
        let reply: @Sendable (RPCReply) -> Void

        func callAsFunction(_ answer: RPCReply) {
            let elapsed = MonotonicClock.nowMicroseconds() - started
            let reason = answer.failure.map { $0.reasonText ?? "error" }
            route.metrics.record(route.metricsSlot, microseconds: elapsed, errorReason: reason)
            // The access log: never params, never the session token; what anyone can send
            // without limit is counted for the summary line instead.
            if reason == nil, let slot = route.successSummary {
                route.accessLog.summarise(slot)
            } else if let kind = Gateway.summaryKind(method: route.name, group: route.policy?.group, reason: reason) {
                route.accessLog.summarise(kind)
            } else {
                route.accessLog.record(
                    requestID: requestID.description, method: route.name, reason: reason, durationMicroseconds: elapsed, client: client)
            }
            reply(answer)
        }

        func fail(_ error: RPCError) { self(.outcome(.failure(error))) }
    }

    static func rateLimited(retryAfterSeconds: Int64) -> RPCError {
        RPCError(.rateLimited, "too many requests; retry later", extra: ["retry_after": .int(retryAfterSeconds)])
    }

    /// Answers anyone may ask for without limit are summarised, not logged one by one: pings (the
    /// gateway's own and those it forwards, all in the unlimited `ping` group), unknown methods
    /// and rate-limited requests.
    static func summaryKind(method: String, group: String?, reason: String?) -> String? {
        if group == PolicyTable.Group.ping && reason == nil { return method == "gateway.ping" ? "ping" : "forwarded_ping" }
        guard let reason, reason == Reason.rateLimited.rawValue || reason == Reason.methodNotFound.rawValue else { return nil }
        return reason
    }

    /// A line refused before any method (not JSON, not a request, too long) spends a token of
    /// the caller's default bucket like a request, and is counted in metrics and the summary.
    public func refusedLine(reason: String, client: String?) -> RPCError? {
        metrics.increment("rpc.refused.\(reason)")
        if let wait = limiter.take(client: client ?? "unknown", group: PolicyTable.Group.standard) {
            accessLog.summarise(Reason.rateLimited.rawValue)
            return Self.rateLimited(retryAfterSeconds: wait)
        }
        accessLog.summarise(reason)
        return nil
    }

    private func answerLocally(_ method: String, pong: RawJSON) -> RPCReply {
        switch method {
        case "gateway.ping":
            return .encodedResult(pong)
        case "gateway.health":
            return .outcome(.success(["status": .string(isServing ? "ok" : "down")]))
        default:
            return .outcome(.failure(.methodNotFound(method)))
        }
    }

    /// True while every configured service has a replica that is up or not yet probed: what the
    /// public doors may say about health (anyone can learn as much by calling a method).
    public var isServing: Bool {
        pools.values.allSatisfy { pool in pool.statuses.contains { $0.state != .down } }
    }

    /// The operator's view, on the metrics listener only:
    /// `{"status": "ok"|"degraded", "services": {name: {"replicas": [...], "up", "total"}}}`.
    public var healthJSON: JSON {
        var services: [String: JSON] = [:]
        var degraded = false
        for service in PolicyTable.services {
            guard let pool = pools[service] else { continue }
            services[service] = pool.healthJSON
            if pool.statuses.contains(where: { $0.state == .down }) { degraded = true }
        }
        return ["status": .string(degraded ? "degraded" : "ok"), "services": .object(services)]
    }

    /// Per-method counts, latencies and error reasons, the event counters and the caches' sizes,
    /// on the metrics listener only.
    public var metricsJSON: JSON {
        var snapshot = metrics.snapshot().objectValue ?? [:]
        snapshot["sessions_cached"] = .int(Int64(sessions.count))
        snapshot["rate_buckets"] = .int(Int64(limiter.bucketCount))
        return .object(snapshot)
    }

    // MARK: Sessions

    private let introspectionLock = Lock()
    /// Introspections in flight, by token hash: concurrent requests with one token share one call.
    private var introspectionWaiters: [[UInt8]: [@Sendable (Result<SessionInfo, RPCError>) -> Void]] = [:]

    private func resolveSession(
        token: String, identity: PoolOnLoop?, context: CallContext, completion: @escaping @Sendable (Result<SessionInfo, RPCError>) -> Void
    ) {
        if let cached = sessions.lookup(token: token) {
            completion(.success(cached))
            return
        }
        guard let identity else {
            completion(.failure(RPCError(.unavailable, "identity is unavailable")))
            return
        }
        let key = SessionCache.key(forToken: token)
        introspectionLock.lock()
        if introspectionWaiters[key] != nil {
            introspectionWaiters[key]!.append(completion)
            introspectionLock.unlock()
            return
        }
        introspectionWaiters[key] = [completion]
        introspectionLock.unlock()
        let sessions = self.sessions
        let request = RPCRequest(method: "identity.introspect", params: ["session": .string(token)], id: nil)
        let end = ClosureEnd { [self] outcome in
            let resolved: Result<SessionInfo, RPCError>
            switch outcome {
            case .success(let result):
                if let info = SessionInfo(introspection: result.decoded()) {
                    sessions.store(token: token, info: info)
                    resolved = .success(info)
                } else {
                    resolved = .failure(RPCError(.unavailable, "identity answered an unexpected introspection"))
                }
            case .failure(let error) where error.reason == .unauthenticated:
                resolved = .failure(Self.unauthenticated)
            case .failure(let error) where error.reason == .timeout:
                resolved = .failure(error)
            case .failure:
                resolved = .failure(RPCError(.unavailable, "cannot check the session now"))
            }
            introspectionLock.lock()
            let waiters = introspectionWaiters.removeValue(forKey: key) ?? []
            introspectionLock.unlock()
            for waiter in waiters { waiter(resolved) }
        }
        ForwardedCall(pool: identity, request: request, retrySafe: true, pinned: nil, context: context, settings: settings, end: end).start()
    }

    // MARK: Forwarding

    private func forward(
        _ request: RPCRequest, policy: MethodPolicy, pool: PoolOnLoop?, members: [String: JSON], token: String?, context: CallContext,
        finish: consuming Finisher
    ) {
        guard let pool else {
            finish(.outcome(.failure(RPCError(.unavailable, "\(policy.service) is not configured"))))
            return
        }
        var pinned: SocketAddress?
        if policy.routesByRequestID, let requestID = members["request_id"]?.stringValue,
            let replica = PolicyTable.replicaID(fromRequestID: requestID)
        {
            // State lives on the owner: no round robin, no retry elsewhere. Unknown owner: any replica answers not_found.
            pinned = pool.pool.address(forReplicaID: replica)
        }
        let retrySafe: Bool
        switch policy.retry {
        case .safe: retrySafe = true
        case .withIdempotencyKey: retrySafe = members["idempotency_key"].map { $0 != .null } ?? false
        case .neverSent: retrySafe = false
        }
        // Most methods change no session: their answer holds no reference to the shared cache.
        let drop = policy.cacheEffect == .none ? .none : CacheDrop(policy.cacheEffect, token: token, members: members, sessions: sessions)
        // Moved, not copied, into the call: a copy retains and then releases the finisher's references.
        let end = ForwardedAnswer(drop: drop, finish: consume finish)
        ForwardedCall(pool: pool, request: request, retrySafe: retrySafe, pinned: pinned, context: context, settings: settings, end: consume end).start()
    }

    /// A forwarded request's answer: the session cache told, then the answer finished.
    private struct ForwardedAnswer: ForwardedCallEnd {
        let drop: CacheDrop
        let finish: Finisher

        func callEnded(_ outcome: Result<RawJSON, RPCError>) {
            drop.apply(after: outcome)
            switch outcome {
            case .success(let result): finish(.encodedResult(result))
            case .failure(let error): finish(.outcome(.failure(error)))
            }
        }
    }

    /// What a forwarded call's answer does to the session cache, worked out before it leaves
    /// (so the answer's way back keeps no copy of the request's members). Only a drop holds the
    /// cache: every loop shares it, and a reference per request would pass its count between cores.
    private enum CacheDrop: Sendable {
        case none
        case token(String, SessionCache)
        /// Only once the call succeeded.
        case sessionID(String, SessionCache)

        init(_ effect: MethodPolicy.CacheEffect, token: String?, members: [String: JSON], sessions: SessionCache) {
            switch effect {
            case .none:
                self = .none
            case .dropCallerSession:
                self = token.map { .token($0, sessions) } ?? .none
            case .dropSessionID(let key):
                self = (members[key]?.stringValue ?? members[key]?.intValue.map(String.init)).map { .sessionID($0, sessions) } ?? .none
            }
        }

        func apply(after outcome: Result<RawJSON, RPCError>) {
            switch self {
            case .none: return
            case .token(let token, let sessions): sessions.drop(token: token)
            case .sessionID(let id, let sessions): if case .success = outcome { sessions.drop(sessionID: id) }
            }
        }
    }
}
