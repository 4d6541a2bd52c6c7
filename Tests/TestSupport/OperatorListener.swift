import LineProtocol
import Platform

/// A gateway's operator listener (`--metrics-listen`), read as the scraper and an operator read
/// it: plain HTTP GETs of `/metrics` and `/healthz`.
public enum OperatorListener {
    public static func metrics(_ endpoint: Endpoint) throws -> PrometheusSamples {
        let response = try RawHTTPClient(endpoint).exchange(RawHTTPClient.get("/metrics"))
        guard response.status == 200 else { throw TestFailure("GET /metrics answered \(response.status): \(response.text)") }
        return PrometheusSamples(response.text)
    }

    /// Every replica's state (`{"status", "services": {name: {"replicas", "up", "total"}}}`), 200 or 503.
    public static func health(_ endpoint: Endpoint) throws -> JSON {
        let response = try RawHTTPClient(endpoint).exchange(RawHTTPClient.get("/healthz"))
        guard let json = response.json else { throw TestFailure("GET /healthz answered \(response.status): \(response.text)") }
        return json
    }
}
