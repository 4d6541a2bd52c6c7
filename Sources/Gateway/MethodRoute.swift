import Contract
import LineProtocol
import RPC
import Runtime

/// A method as the gateway dispatches it, with what every one of its requests needs worked out
/// once, when the gateway starts: its policy, its rate-limit group, its metrics slot, where its
/// answer is counted. Each
/// loop has its own routes (`LoopLocal`), so the one reference a request's answer carries back is
/// counted on that loop's core only.
final class MethodRoute: Sendable {
    /// The method, or "unknown" for a name without a policy (never a caller's made-up name).
    let name: String
    /// Nil for "unknown": such a request is answered `method_not_found`.
    let policy: MethodPolicy?
    /// Where its requests spend a token: the policy's group, the default one for "unknown".
    let rateLimitGroup: String
    /// That group has no limit (pings): no bucket to look up.
    let isUnlimited: Bool
    let metricsSlot: Metrics.Slot
    let metrics: Metrics
    let accessLog: AccessLog
    /// Where an answer without error is counted when the access log summarises it (pings)
    /// instead of writing a line; nil when each is logged.
    let successSummary: AccessLog.SummarySlot?
    /// The replicas its requests go to, as this loop reaches them; nil for a local method,
    /// "unknown", or a service the gateway was not given.
    let pool: PoolOnLoop?
    /// Answered from every service's part (`identity.export`, see `Gateway+Export`) rather than
    /// forwarded as it is: decided here once, not by comparing names on every request.
    let composesParts: Bool

    private init(name: String, policy: MethodPolicy?, pools: [String: PoolOnLoop], limiter: RateLimiter, metrics: Metrics, accessLog: AccessLog) {
        self.name = name
        // This loop's own copy: a request retains its policy, and one shared by every loop would
        // pass its count between the cores.
        self.policy = policy.map(MethodPolicy.init(copying:))
        pool = policy.flatMap { pools[$0.service] }
        composesParts = name == DataExportContract.export.name
        rateLimitGroup = policy?.group ?? PolicyTable.Group.standard
        isUnlimited = limiter.isUnlimited(group: rateLimitGroup)
        self.metrics = metrics
        self.accessLog = accessLog
        metricsSlot = metrics.slot(for: name)
        successSummary = Gateway.summaryKind(method: name, group: policy?.group, reason: nil).map(accessLog.slot(forKind:))
    }

    /// A loop's routes: one per method of the policy table, and the route of every other name.
    final class Table: Sendable {
        private let routes: MethodTable<MethodRoute>
        let unknown: MethodRoute
        /// `gateway.ping`'s answer, encoded once (per loop, like the routes).
        let pong = RawJSON(["pong": true])
        /// Identity as this loop reaches it, for session checks.
        let identity: PoolOnLoop?
        /// Every service as this loop reaches it, for the calls the gateway makes itself (an
        /// export's parts).
        let services: [String: PoolOnLoop]

        /// The routes of the loops of `LoopLocal` part `part` of `parts`.
        init(pools shared: [String: ServicePool], loopPart part: Int, of parts: Int, limiter: RateLimiter, metrics: Metrics, accessLog: AccessLog) {
            let pools = shared.mapValues { PoolOnLoop(pool: $0, loopPart: part, of: parts) }
            identity = pools["identity"]
            services = pools
            routes = PolicyTable.methods.reduce(into: MethodTable<MethodRoute>()) { routes, entry in
                routes.insert(
                    MethodRoute(name: entry.key, policy: entry.value, pools: pools, limiter: limiter, metrics: metrics, accessLog: accessLog),
                    for: entry.key)
            }
            unknown = MethodRoute(name: "unknown", policy: nil, pools: pools, limiter: limiter, metrics: metrics, accessLog: accessLog)
        }

        func route(for method: String) -> MethodRoute { routes.value(for: method) ?? unknown }
    }
}
