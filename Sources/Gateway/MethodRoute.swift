import Runtime

/// A method as the gateway dispatches it, with what every one of its requests needs worked out
/// once, when the gateway starts: its policy and its metrics slot. A class, so the answer's way
/// back carries one reference instead of the method's name, group and slot.
final class MethodRoute: Sendable {
    /// The method, or "unknown" for a name without a policy (never a caller's made-up name).
    let name: String
    /// Nil for "unknown": such a request is answered `method_not_found`.
    let policy: MethodPolicy?
    let metricsSlot: Metrics.Slot

    private init(name: String, policy: MethodPolicy?, metrics: Metrics) {
        self.name = name
        self.policy = policy
        metricsSlot = metrics.slot(for: name)
    }

    /// One route per method of the policy table, and the route of every other name.
    static func table(metrics: Metrics) -> (routes: [String: MethodRoute], unknown: MethodRoute) {
        let routes = PolicyTable.methods.reduce(into: [String: MethodRoute]()) { routes, entry in
            routes[entry.key] = MethodRoute(name: entry.key, policy: entry.value, metrics: metrics)
        }
        return (routes, MethodRoute(name: "unknown", policy: nil, metrics: metrics))
    }
}
