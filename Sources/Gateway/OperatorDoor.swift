import HTTP
import LineProtocol

/// The operator's HTTP listener (`--metrics-listen`), apart from the public doors: `GET /metrics`
/// in the Prometheus text format and `GET /healthz` with every replica's state. What it shows
/// (internal addresses, replica ids, per-method counts and error reasons) is for operators and
/// the scraper only: bind it to an address the public cannot reach.
public final class OperatorDoor: HTTPHandler, Sendable {
    private let metrics: @Sendable () -> JSON
    private let health: @Sendable () -> JSON

    public init(metrics: @escaping @Sendable () -> JSON, health: @escaping @Sendable () -> JSON) {
        self.metrics = metrics
        self.health = health
    }

    public convenience init(gateway: Gateway) {
        self.init(metrics: { gateway.metricsJSON }, health: { gateway.healthJSON })
    }

    public func handle(_ request: HTTPRequest, context: HTTPRequestContext, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        var response = answer(request)
        response.headers.set("Cache-Control", "no-store")
        response.headers.set("X-Content-Type-Options", "nosniff")
        respond(response)
    }

    private func answer(_ request: HTTPRequest) -> HTTPResponse {
        guard request.path == "/metrics" || request.path == "/healthz" else { return .error(404, reason: "not_found", "no such path") }
        guard request.method == "GET" || request.method == "HEAD" else {
            return .error(405, reason: "method_not_allowed", "method not allowed here", headers: ["Allow": "GET, HEAD"])
        }
        if request.path == "/healthz" { return Self.healthResponse(health()) }
        return .text(200, PrometheusText.render(metrics()), headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"])
    }

    /// 200 while every service has a replica up (`ok`, or `degraded` with one up), else 503.
    static func healthResponse(_ health: JSON) -> HTTPResponse {
        let status = health["status"]?.stringValue ?? "ok"
        let serviceDown = (health["services"]?.objectValue ?? [:]).values.contains { $0["up"]?.intValue == 0 }
        let healthy = status == "ok" || (status == "degraded" && !serviceDown)
        return .json(healthy ? 200 : 503, health)
    }
}
