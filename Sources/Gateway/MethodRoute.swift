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
    /// The replicas its requests go to; nil for a local method, "unknown", or a service the
    /// gateway was not given.
    let pool: ServicePool?

    private init(name: String, policy: MethodPolicy?, pools: [String: ServicePool], limiter: RateLimiter, metrics: Metrics, accessLog: AccessLog) {
        self.name = name
        self.policy = policy
        pool = policy.flatMap { pools[$0.service] }
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

        init(pools: [String: ServicePool], limiter: RateLimiter, metrics: Metrics, accessLog: AccessLog) {
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
