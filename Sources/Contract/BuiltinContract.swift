/// What every service's host answers by itself: `ping` (public, forwarded by the gateway),
/// `health` and `metrics` (internal: replicas, addresses and figures stay off the public doors).
public enum BuiltinContract {
    public static func ping(_ service: String) -> MethodContract {
        MethodContract(
            "\(service).ping", .open, group: .ping, retry: .safe, summary: "Liveness of \(service), through the gateway's hop.",
            result: [Member("pong", .boolean)])
    }

    public static func health(_ service: String) -> MethodContract {
        MethodContract(
            "\(service).health", .internal, retry: .safe, summary: "The replica's state and its named checks (the database answers).",
            result: [
                Member("status", .string), Member("service", .string), Member("replica_id", .string), Member("uptime_s", .integer(minimum: 0)),
                Member("connections", .integer(minimum: 0)), Member("inflight", .integer(minimum: 0)), Member("checks", .map(.any)),
            ])
    }

    public static func metrics(_ service: String) -> MethodContract {
        MethodContract("\(service).metrics", .internal, retry: .safe, summary: "The replica's counters and latencies per method.", result: nil)
    }

    static let services = ["identity", "verification", "accounts", "reset"]

    static var all: [MethodContract] { services.flatMap { [ping($0), health($0), metrics($0)] } }
}

/// The gateway's own methods, answered without a hop.
public enum GatewayContract {
    public static let ping = MethodContract(
        "gateway.ping", .open, group: .ping, retry: .safe, summary: "Liveness of the gateway.", result: [Member("pong", .boolean)])
    public static let health = MethodContract(
        "gateway.health", .open, group: .observe, retry: .safe,
        summary: "Liveness only; replicas, addresses and figures are on the operator listener.", result: [Member("status", .string)])

    static let all = [ping, health]
}
