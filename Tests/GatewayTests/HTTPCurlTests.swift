import Foundation
@testable import Gateway
import LineProtocol
import Runtime
import ServerTestSupport
@testable import ServiceKit
import TestSupport
import XCTest

/// curl as a real HTTP/1.1 client against the door (over a fake dispatcher).
final class HTTPCurlTests: XCTestCase {
    private func curl(_ arguments: [String]) throws -> Curl.Response { try Curl.run(arguments, maxTimeSeconds: 10) }

    func testCurlDrivesTheRoutesAndSeesTheStatuses() throws {
        try XCTSkipUnless(Curl.isInstalled, "curl is not installed")
        var settings = HTTPGatewayDoor.Settings()
        settings.aasaAppIDs = ["ABCDE12345.com.example.bank"]
        let server = try TestHTTPServer(settings: settings)
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.endpoint.port)"
        let json = ["-H", "Content-Type: application/json"]

        let ping = try curl(["-X", "POST", "--data", "{}"] + json + ["\(base)/v1/gateway/ping"])
        XCTAssertEqual(ping.status, 200)
        XCTAssertEqual(try JSONParser.parse(ping.body)["result"]?["pong"], true)

        let whoami = try curl(["-X", "POST", "--data", "{}", "-H", "Authorization: Bearer lks_curl"] + json + ["\(base)/v1/identity/whoami"])
        XCTAssertEqual(whoami.status, 200)
        XCTAssertEqual(try JSONParser.parse(whoami.body)["result"]?["session"], "lks_curl")

        XCTAssertEqual(try curl(["--data", #"{"reason":"rate_limited"}"#] + json + ["\(base)/v1/t/fail"]).status, 429)
        XCTAssertEqual(try curl(["--data", #"{"reason":"step_up_required"}"#] + json + ["\(base)/v1/t/fail"]).status, 403)
        XCTAssertEqual(try curl(["--data", #"{"email":"a@example.com"}"#] + json + ["\(base)/auth/password/request"]).status, 200)
        XCTAssertEqual(try curl(["--data", #"{"token":"lkr_good"}"#] + json + ["\(base)/auth/password/validate"]).status, 200)
        XCTAssertEqual(try curl(["--data", #"{"token":"lkr_nope"}"#] + json + ["\(base)/auth/password/validate"]).status, 400)
        XCTAssertEqual(try curl(["--data", #"{"token":"lkr_good","password":"weak"}"#] + json + ["\(base)/auth/password/reset"]).status, 422)
        XCTAssertEqual(try curl(["--data", "a=1", "\(base)/v1/gateway/ping"]).status, 415, "curl's default form type is refused")
        XCTAssertEqual(try curl(["\(base)/v1/gateway/ping"]).status, 405)
        XCTAssertEqual(try curl(["\(base)/nowhere"]).status, 404)
        XCTAssertEqual(try curl(["\(base)/healthz"]).status, 200)
        XCTAssertEqual(try curl(["\(base)/.well-known/apple-app-site-association"]).status, 200)
        XCTAssertEqual(try curl(["\(base)/metrics"]).status, 404, "metrics are the operator listener's")

        let rpc = try curl(["--data", #"[{"jsonrpc":"2.0","id":1,"method":"gateway.ping"},{"jsonrpc":"2.0","id":2,"method":"t.echo","params":{"x":1}}]"#] + json + ["\(base)/rpc"])
        XCTAssertEqual(rpc.status, 200)
        XCTAssertEqual(try JSONParser.parse(rpc.body).arrayValue?.count, 2)
    }

    func testCurlScrapesTheOperatorDoor() throws {
        try XCTSkipUnless(Curl.isInstalled, "curl is not installed")
        let metrics = Metrics()
        metrics.record(metrics.slot(for: "accounts.confirm"), microseconds: 900, errorReason: "invalid_code")
        let server = try HTTPServerOnLoop(handler: OperatorDoor(metrics: { metrics.snapshot() }, health: { ["status": "ok", "services": [:]] }))
        defer { server.stop() }
        let scraped = try curl(["http://127.0.0.1:\(server.endpoint.port)/metrics"])
        XCTAssertEqual(scraped.status, 200)
        let samples = PrometheusSamples(scraped.body)
        XCTAssertEqual(samples.value("latchkey_requests_total", ["method": "accounts.confirm"]), 1)
        XCTAssertEqual(samples.value("latchkey_request_errors_total", ["method": "accounts.confirm", "reason": "invalid_code"]), 1)
        XCTAssertEqual(try curl(["http://127.0.0.1:\(server.endpoint.port)/healthz"]).status, 200)
    }

    func testCurlBigBodyWithExpectContinueAndOversizeBody() throws {
        try XCTSkipUnless(Curl.isInstalled, "curl is not installed")
        let server = try TestHTTPServer()
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.endpoint.port)"
        let padding = String(repeating: "x", count: 40_000)
        // Force the 100-continue handshake regardless of curl's own threshold.
        let big = try curl(["--data", "{\"pad\":\"\(padding)\"}", "-H", "Content-Type: application/json", "-H", "Expect: 100-continue", "\(base)/v1/t/echo"])
        XCTAssertEqual(big.status, 200)
        XCTAssertEqual(try JSONParser.parse(big.body)["result"]?["pad"]?.stringValue?.count, 40_000)
        let tooBig = String(repeating: "y", count: 70_000)
        let refused = try curl(["--data", "{\"pad\":\"\(tooBig)\"}", "-H", "Content-Type: application/json", "\(base)/v1/t/echo"])
        XCTAssertEqual(refused.status, 413)
    }

    func testCurlReusesOneKeepAliveConnectionForSeveralURLs() throws {
        try XCTSkipUnless(Curl.isInstalled, "curl is not installed")
        let server = try TestHTTPServer()
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.endpoint.port)/healthz"
        let text = try runProgram(Curl.path, ["-sS", "-w", "%{http_code} %{num_connects}\n", "-o", "/dev/null", url, "-o", "/dev/null", url, "-o", "/dev/null", url]).output
        XCTAssertEqual(text.split(separator: "\n"), ["200 1", "200 0", "200 0"], "one connect, then reuse")
    }
}
