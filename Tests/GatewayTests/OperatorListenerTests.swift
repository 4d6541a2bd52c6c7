@testable import Gateway
import LineProtocol
import Platform
import ServerTestSupport
import TestSupport
import XCTest

/// Replica addresses, replica ids and per-method figures are the operator's: the public doors
/// (line and HTTP) answer a bare liveness and no metrics, the operator listener serves both.
final class OperatorListenerTests: XCTestCase {
    private var loopThread: LoopThread!
    private var fakes: [String: FakeService] = [:]
    private var gateway: GatewayUnderTest!

    override func setUpWithError() throws {
        loopThread = try LoopThread()
        for service in PolicyTable.services {
            fakes[service] = try FakeService(service: service, replicaID: "\(service)-1", loopThread: loopThread)
        }
        fakes["identity"]!.addSession(token: "lks_other", sessionID: "s-other", aal: 2)
        gateway = try GatewayUnderTest(endpoints: fakes.mapValues { [$0.endpoint] })
        for service in PolicyTable.services { try gateway.waitUntilUp(service, replicas: 1) }
    }

    override func tearDown() {
        gateway?.shutdown()
        for fake in fakes.values where !fake.crashed { try? fake.crash() }
        loopThread?.shutdown()
        gateway = nil
        loopThread = nil
        fakes = [:]
    }

    /// Another client's confirmations, as an outsider on the public doors would try to watch them.
    private func someoneConfirms() throws {
        let other = try gateway.client()
        XCTAssertNotNil(try other.call("accounts.confirm", ["session": "lks_other", "transfer_id": "t1", "code": "123456"]).result)
    }

    func testThePublicLineDoorAnswersALivenessAndNoMetrics() throws {
        try someoneConfirms()
        let outsider = try gateway.client()
        XCTAssertEqual(try outsider.call("gateway.health").result, ["status": "ok"])
        let metrics = try outsider.call("gateway.metrics")
        XCTAssertEqual(metrics.error?.code, -32601)
        XCTAssertNil(metrics.result)
        try fakes["accounts"]!.crash()
        try waitUntil("a service with no replica up is down") { try outsider.call("gateway.health").result == ["status": "down"] }
    }

    func testThePublicHTTPDoorAnswersALivenessAndNoMetrics() throws {
        let door = try gateway.serveHTTP(HTTPGatewayDoor(dispatcher: gateway.gateway))
        try someoneConfirms()
        let outsider = try RawHTTPClient(door)
        let health = try outsider.exchange(RawHTTPClient.get("/healthz"))
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(health.json, ["status": "ok"])
        XCTAssertEqual(try outsider.exchange(RawHTTPClient.get("/metrics")).status, 404)
        let overRPC = try outsider.exchange(RawHTTPClient.post("/rpc", #"{"jsonrpc":"2.0","id":1,"method":"gateway.metrics"}"#))
        XCTAssertEqual(overRPC.json?["error"]?["code"], -32601)
        XCTAssertEqual(try outsider.exchange(RawHTTPClient.post("/v1/gateway/metrics", "{}")).status, 404)
        XCTAssertFalse(health.text.contains("accounts") || overRPC.text.contains("accounts.confirm"), health.text + overRPC.text)
    }

    func testTheOperatorListenerServesPrometheusMetricsAndEveryReplica() throws {
        let listener = try gateway.serveHTTP(OperatorDoor(gateway: gateway.gateway))
        let scraper = try RawHTTPClient(listener)
        let before = PrometheusSamples(try scraper.exchange(RawHTTPClient.get("/metrics")).text)
        try someoneConfirms()
        let metrics = try scraper.exchange(RawHTTPClient.get("/metrics"))
        XCTAssertEqual(metrics.status, 200)
        XCTAssertEqual(metrics.headers["Content-Type"], "text/plain; version=0.0.4; charset=utf-8")
        XCTAssertTrue(metrics.text.contains("# TYPE latchkey_requests_total counter\n"), metrics.text)
        let after = PrometheusSamples(metrics.text)
        let confirms = ["method": "accounts.confirm"]
        XCTAssertEqual(after.count("latchkey_requests_total", confirms), before.count("latchkey_requests_total", confirms) + 1)
        XCTAssertNotNil(after.value("latchkey_sessions_cached"))

        let health = try scraper.exchange(RawHTTPClient.get("/healthz"))
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(health.json?["status"], "ok")
        let replica = health.json?["services"]?["accounts"]?["replicas"]?.arrayValue?.first
        XCTAssertEqual(replica?["replica_id"], "accounts-1")
        XCTAssertEqual(replica?["address"]?.stringValue, fakes["accounts"]!.endpoint.description)

        XCTAssertEqual(try scraper.exchange(RawHTTPClient.post("/metrics", "{}")).status, 405)
        XCTAssertEqual(try scraper.exchange(RawHTTPClient.get("/v1/gateway/ping")).status, 404, "no public route here")
    }

    func testTheOperatorsHealthIs503WhenAServiceHasNoReplicaUp() {
        XCTAssertEqual(OperatorDoor.healthResponse(["status": "degraded", "services": ["identity": ["up": 0, "total": 2]]]).status, 503)
        XCTAssertEqual(OperatorDoor.healthResponse(["status": "degraded", "services": ["identity": ["up": 1, "total": 2]]]).status, 200)
    }
}
