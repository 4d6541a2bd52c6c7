import Foundation
@testable import Gateway
@testable import HTTP
import LineProtocol
@testable import Platform
import Runtime
import ServerTestSupport
@testable import ServiceKit
import TestSupport
import XCTest

/// The gateway door's routes over real TCP, against a fake dispatcher standing in for the gateway.
final class HTTPGatewayDoorTests: XCTestCase {
    private var server: TestHTTPServer!
    private var client: RawHTTPClient!

    override func setUpWithError() throws {
        var settings = HTTPGatewayDoor.Settings()
        settings.aasaAppIDs = ["ABCDE12345.com.example.bank"]
        settings.trustedProxies = ["127.0.0.1"]
        server = try TestHTTPServer(settings: settings)
        client = try RawHTTPClient(server.endpoint)
    }

    override func tearDown() {
        client = nil
        server?.stop()
    }

    private func post(_ path: String, _ body: String, headers: [String] = []) throws -> RawHTTPResponse {
        try client.exchange(RawHTTPClient.post(path, body, headers: headers))
    }

    // MARK: POST /rpc

    func testRPCAnswersExactlyLikeTheLineProtocol() throws {
        let single = try post("/rpc", #"{"jsonrpc":"2.0","id":7,"method":"gateway.ping"}"#)
        XCTAssertEqual(single.status, 200)
        XCTAssertEqual(single.text, #"{"jsonrpc":"2.0","id":7,"result":{"pong":true}}"#)

        let batch = try post("/rpc", #"[{"jsonrpc":"2.0","id":1,"method":"t.echo","params":{"a":1}},{"jsonrpc":"2.0","method":"gateway.ping"},{"jsonrpc":"2.0","id":2,"method":"nope"},{"jsonrpc":"2.0","id":3}]"#)
        XCTAssertEqual(batch.status, 200)
        let answers = try XCTUnwrap(batch.json?.arrayValue)
        XCTAssertEqual(answers.count, 3, "the notification gets no answer")
        XCTAssertEqual(Set(answers.compactMap { $0["id"]?.intValue }), [1, 2, 3])
        XCTAssertEqual(answers.first { $0["id"] == 2 }?["error"]?["code"], -32601)
        XCTAssertEqual(answers.first { $0["id"] == 3 }?["error"]?["code"], -32600)

        let notification = try post("/rpc", #"{"jsonrpc":"2.0","method":"gateway.ping"}"#)
        XCTAssertEqual(notification.status, 204)
        XCTAssertEqual(notification.body, [])
        XCTAssertEqual(try post("/rpc", #"[{"jsonrpc":"2.0","method":"gateway.ping"},{"jsonrpc":"2.0","method":"t.slow","params":{"ms":10}}]"#).status, 204)

        let parseError = try post("/rpc", "{nope")
        XCTAssertEqual(parseError.status, 400)
        XCTAssertEqual(parseError.json?["error"]?["code"], -32700)
        XCTAssertEqual(parseError.json?["id"], .null)
        XCTAssertEqual(try post("/rpc", "[]").json?["error"]?["code"], -32600)
    }

    func testRPCNeverBelievesCallerMetaAndPassesThePeerAsClient() throws {
        _ = try post("/rpc", #"{"jsonrpc":"2.0","id":1,"method":"t.echo","meta":{"client":"6.6.6.6","request_id":"mine"}}"#)
        let call = try XCTUnwrap(server.dispatcher.recorded.last)
        XCTAssertNil(call.request.meta)
        XCTAssertEqual(call.context.client, "127.0.0.1")
        XCTAssertNotEqual(call.context.requestID, "mine")
    }

    // MARK: POST /v1/<service>/<method>

    func testFriendlyRouteTakesTheBodyAsParamsAndTheSessionFromTheBearerHeader() throws {
        let response = try post("/v1/identity/whoami", "{}", headers: ["Authorization: Bearer lks_abc"])
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.json?["result"]?["session"], "lks_abc")
        let call = try XCTUnwrap(server.dispatcher.recorded.last)
        XCTAssertEqual(call.request.method, "identity.whoami")
        XCTAssertEqual(response.headers["X-Request-Id"], call.context.requestID, "the id in the logs")

        XCTAssertEqual(try post("/v1/identity/whoami", #"{"session":"lks_body"}"#).json?["result"]?["session"], "lks_body")
        XCTAssertEqual(try post("/v1/identity/whoami", #"{"session":"lks_abc"}"#, headers: ["Authorization: Bearer lks_abc"]).status, 200)
        let conflict = try post("/v1/identity/whoami", #"{"session":"lks_other"}"#, headers: ["Authorization: Bearer lks_abc"])
        XCTAssertEqual(conflict.status, 400)
        XCTAssertEqual(conflict.json?["error"]?["data"]?["reason"], "invalid_params")
        let basic = try post("/v1/identity/whoami", "{}", headers: ["Authorization: Basic dTpw"])
        XCTAssertEqual(basic.status, 401)
        XCTAssertEqual(basic.headers["WWW-Authenticate"], "Bearer")

        // An empty body is `{}`.
        let empty = try client.exchange("POST /v1/gateway/ping HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n")
        XCTAssertEqual(empty.json?["result"]?["pong"], true)
        // A body of only white space is not JSON (RFC 8259 needs a value), so it is not `{}`.
        XCTAssertEqual(try post("/v1/gateway/ping", " ").json?["error"]?["data"]?["reason"], "parse_error")
        XCTAssertEqual(try post("/v1/t/echo", "[1]").status, 400)
        XCTAssertEqual(try post("/v1/t/echo", "{bad").status, 400)
        XCTAssertEqual(try post("/v1/t/echo", "{bad").json?["error"]?["data"]?["reason"], "parse_error")
    }

    func testErrorReasonsMapToHTTPStatusesWithTheReasonInTheBody() throws {
        let expected: [(String, Int)] = [
            ("invalid_params", 400), ("unauthenticated", 401), ("invalid_credentials", 401), ("step_up_required", 403),
            ("not_found", 404), ("conflict", 409), ("invalid_code", 422), ("weak_password", 422), ("locked", 423),
            ("rate_limited", 429), ("unavailable", 503), ("timeout", 504), ("internal", 500), ("invalid_token", 400),
        ]
        for (reason, status) in expected {
            let response = try post("/v1/t/fail", #"{"reason":"\#(reason)"}"#)
            XCTAssertEqual(response.status, status, reason)
            XCTAssertEqual(response.json?["error"]?["data"]?["reason"], .string(reason))
            XCTAssertNotNil(response.json?["error"]?["code"]?.intValue)
            XCTAssertNotNil(response.json?["error"]?["message"]?.stringValue)
        }
        XCTAssertEqual(try post("/v1/t/fail", #"{"reason":"rate_limited"}"#).headers["Retry-After"], "7")
        XCTAssertEqual(try post("/v1/identity/internal_only", "{}").status, 404, "method not found is 404")
    }

    /// protocol/http.md's one rule: on every route but `/rpc`, `error.code` is the HTTP status.
    /// Before, JSON-RPC codes (-32602, -32601, -32700) and a validate answer turned into 400 kept
    /// a code that was not their status.
    func testEveryErrorBodyCarriesTheResponseStatusAsItsCode() throws {
        var responses: [(String, RawHTTPResponse)] = []
        for reason in Reason.allCases {
            responses.append((reason.rawValue, try post("/v1/t/fail", #"{"reason":"\#(reason.rawValue)"}"#)))
        }
        responses.append(("body not an object", try post("/v1/t/echo", "[1]")))
        responses.append(("body not JSON", try post("/v1/t/echo", "{bad")))
        responses.append(("no such method", try post("/v1/identity/internal_only", "{}")))
        responses.append(("session twice", try post("/v1/identity/whoami", #"{"session":"a"}"#, headers: ["Authorization: Bearer b"])))
        responses.append(("validate, expired", try post("/auth/password/validate", #"{"token":"lkr_expired"}"#)))
        responses.append(("no such path", try client.exchange(RawHTTPClient.get("/nope"))))
        responses.append(("wrong method", try client.exchange(RawHTTPClient.get("/v1/gateway/ping"))))
        responses.append(("form body", try client.exchange(
            "POST /v1/t/echo HTTP/1.1\r\nHost: a\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\na=1")))
        for (name, response) in responses {
            XCTAssertGreaterThanOrEqual(response.status, 400, name)
            XCTAssertEqual(response.json?["error"]?["code"]?.intValue, Int64(response.status), name)
            XCTAssertNotNil(response.json?["error"]?["data"]?["reason"]?.stringValue, name)
        }
        let framing = try RawHTTPClient(server.endpoint).exchange("POST /v1/t/echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        XCTAssertEqual(framing.status, 501)
        XCTAssertEqual(framing.json?["error"]?["code"], 501)
        XCTAssertEqual(try post("/rpc", "{bad").json?["error"]?["code"], -32700, "/rpc answers JSON-RPC, codes unchanged")
    }

    func testUnknownPathsWrongMethodsAndMediaTypes() throws {
        XCTAssertEqual(try client.exchange(RawHTTPClient.get("/nope")).status, 404)
        XCTAssertEqual(try client.exchange(RawHTTPClient.get("/v1/a")).status, 404)
        XCTAssertEqual(try client.exchange(RawHTTPClient.get("/v1/Bad.Name/x")).status, 404)
        let wrongMethod = try client.exchange(RawHTTPClient.get("/v1/gateway/ping"))
        XCTAssertEqual(wrongMethod.status, 405)
        XCTAssertEqual(wrongMethod.headers["Allow"], "POST")
        let wrongOnHealth = try post("/healthz", "{}")
        XCTAssertEqual(wrongOnHealth.status, 405)
        XCTAssertEqual(wrongOnHealth.headers["Allow"], "GET, HEAD")
        let form = try client.exchange("POST /v1/gateway/ping HTTP/1.1\r\nHost: a\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\na=1")
        XCTAssertEqual(form.status, 415)
        let charset = try client.exchange("POST /v1/gateway/ping HTTP/1.1\r\nHost: a\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}")
        XCTAssertEqual(charset.status, 200)
    }

    // MARK: The seed's reset paths

    func testSeedPasswordResetPaths() throws {
        let request = try post("/auth/password/request", #"{"email":"someone@example.com"}"#)
        XCTAssertEqual(request.status, 200)
        XCTAssertEqual(request.headers["Referrer-Policy"], "no-referrer")
        XCTAssertEqual(request.headers["Cache-Control"], "no-store")
        XCTAssertEqual(server.dispatcher.recorded.last?.request.method, "reset.request")

        XCTAssertEqual(try post("/auth/password/validate", #"{"token":"lkr_good"}"#).status, 200)
        let invalid = try post("/auth/password/validate", #"{"token":"lkr_bad"}"#)
        XCTAssertEqual(invalid.status, 400)
        XCTAssertEqual(invalid.json?["error"]?["data"]?["reason"], "invalid_token")
        XCTAssertEqual(invalid.headers["Referrer-Policy"], "no-referrer")

        XCTAssertEqual(try post("/auth/password/reset", #"{"token":"lkr_good","password":"a long new passphrase"}"#).status, 200)
        XCTAssertEqual(try post("/auth/password/reset", #"{"token":"lkr_good","password":"weak"}"#).status, 422)
        XCTAssertEqual(try post("/auth/password/reset", #"{"token":"lkr_bad","password":"x"}"#).status, 400)
    }

    func testAResetLinkMovesItsTokenIntoAStrictCookieAndNeverEchoesIt() throws {
        let page = try client.exchange(RawHTTPClient.get("/reset?token=lkr_secret"))
        XCTAssertEqual(page.status, 303)
        XCTAssertEqual(page.headers["Location"], "/reset", "the token leaves the address bar")
        XCTAssertEqual(page.headers["Referrer-Policy"], "no-referrer")
        XCTAssertEqual(page.headers["Cache-Control"], "no-store")
        let cookie = try XCTUnwrap(page.headers["Set-Cookie"])
        XCTAssertTrue(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/"), cookie)
        XCTAssertFalse(page.text.contains("lkr_secret"))
        let policy = try XCTUnwrap(page.headers["Content-Security-Policy"])
        XCTAssertTrue(policy.contains("frame-ancestors 'none'") && !policy.contains("unsafe-inline"), policy)
        let cross = try client.exchange(
            "POST /reset HTTP/1.1\r\nHost: a\r\nOrigin: https://evil.example\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\na=1")
        XCTAssertEqual(cross.status, 403, "a form posted from another origin")
    }

    // MARK: AASA, health, metrics

    func testAppleAppSiteAssociationFromConfiguration() throws {
        let response = try client.exchange(RawHTTPClient.get("/.well-known/apple-app-site-association"))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.headers["Content-Type"], "application/json")
        let details = try XCTUnwrap(response.json?["applinks"]?["details"]?.arrayValue?.first)
        XCTAssertEqual(details["appIDs"], ["ABCDE12345.com.example.bank"])
        XCTAssertEqual(details["appID"], "ABCDE12345.com.example.bank")
        XCTAssertEqual(details["paths"], ["/reset*"])
        XCTAssertEqual(details["components"], [["/": "/reset*"]])
        XCTAssertEqual(response.json?["webcredentials"]?["apps"], ["ABCDE12345.com.example.bank"])

        let unconfigured = try TestHTTPServer()
        defer { unconfigured.stop() }
        let other = try RawHTTPClient(unconfigured.endpoint)
        XCTAssertEqual(try other.exchange(RawHTTPClient.get("/.well-known/apple-app-site-association")).status, 404)
    }

    func testHealthzIsALivenessAndMetricsAreNotServed() throws {
        let health = try client.exchange(RawHTTPClient.get("/healthz"))
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(health.json, ["status": "ok"], "the dispatcher's services are not passed on")
        XCTAssertEqual(try client.exchange(RawHTTPClient.get("/metrics")).status, 404)
    }

    func testHealthzIs503UnlessTheGatewayServes() {
        XCTAssertEqual(HTTPGatewayDoor.livenessResponse(.success(["status": "down"])).status, 503)
        XCTAssertEqual(HTTPGatewayDoor.livenessResponse(.success(["status": "degraded", "services": ["identity": ["up": 0]]])).status, 503)
        XCTAssertEqual(HTTPGatewayDoor.livenessResponse(.failure(RPCError(.unavailable, "down"))).status, 503)
        let serving = HTTPGatewayDoor.livenessResponse(.success(["status": "ok", "services": ["identity": ["up": 1]]]))
        XCTAssertEqual(serving.status, 200)
        XCTAssertEqual(serving.body, Array(#"{"status":"ok"}"#.utf8))
    }

    func testTheOperatorDoorServesPrometheusText() throws {
        let metrics = Metrics()
        metrics.record(metrics.slot(for: "gateway.ping"), microseconds: 120, errorReason: nil)
        metrics.record(metrics.slot(for: "t.fail"), microseconds: 120, errorReason: "locked")
        let server = try HTTPServerOnLoop(handler: OperatorDoor(metrics: { metrics.snapshot() }, health: { ["status": "ok", "services": [:]] }))
        defer { server.stop() }
        let response = try RawHTTPClient(server.endpoint).exchange(RawHTTPClient.get("/metrics"))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.headers["Content-Type"], "text/plain; version=0.0.4; charset=utf-8")
        let text = response.text
        XCTAssertTrue(text.contains("# TYPE latchkey_requests_total counter\n"), text)
        XCTAssertTrue(text.contains("latchkey_requests_total{method=\"gateway.ping\"} 1\n"), text)
        XCTAssertTrue(text.contains("latchkey_request_errors_total{method=\"t.fail\",reason=\"locked\"} 1\n"), text)
        XCTAssertTrue(text.contains("latchkey_request_duration_seconds{method=\"gateway.ping\",quantile=\"0.99\"} 0.000"), text)
        XCTAssertTrue(text.contains("# TYPE latchkey_request_duration_seconds summary\n"), text)
    }

    func testPrometheusLabelValuesAreEscaped() {
        let text = PrometheusText.render(["methods": ["a\"b\\c\nd": ["count": 1, "errors": [:], "p50_us": 1500, "p99_us": 2_000_001]]])
        XCTAssertTrue(text.contains(#"latchkey_requests_total{method="a\"b\\c\nd"} 1"#), text)
        XCTAssertTrue(text.contains(#"quantile="0.5"} 0.001500"#), text)
        XCTAssertTrue(text.contains(#"quantile="0.99"} 2.000001"#), text)
    }

    // MARK: Client address

    func testForwardedForIsBelievedOnlyFromATrustedProxy() throws {
        _ = try post("/v1/gateway/ping", "{}", headers: ["X-Forwarded-For: 6.6.6.6, 10.1.2.3"])
        XCTAssertEqual(server.dispatcher.recorded.last?.context.client, "10.1.2.3", "the right-most untrusted hop")

        let untrusting = try TestHTTPServer()
        defer { untrusting.stop() }
        let other = try RawHTTPClient(untrusting.endpoint)
        _ = try other.exchange(RawHTTPClient.post("/v1/gateway/ping", "{}", headers: ["X-Forwarded-For: 6.6.6.6"]))
        XCTAssertEqual(untrusting.dispatcher.recorded.last?.context.client, "127.0.0.1")
    }

    func testOptionsParseIntoLimitsAndSettings() throws {
        let configuration = try Configuration(
            arguments: ["--http-max-body-bytes", "1024", "--aasa-app-ids", "ABCDE12345.com.example.a,ABCDE12345.com.example.b", "--aasa-paths", "/reset*,/r/*", "--http-listen", "off"],
            environment: ["LATCHKEY_HTTP_HEADER_TIMEOUT_MS": "2500"], options: CommonOptions.all + HTTPOptions.all)
        let limits = try HTTPLimits(configuration)
        XCTAssertEqual(limits.parser.maxBodyBytes, 1024)
        XCTAssertEqual(limits.headerTimeoutMilliseconds, 2500)
        XCTAssertEqual(limits.parser.maxHeaderBytes, 16 * 1024)
        let settings = try HTTPGatewayDoor.Settings(configuration)
        XCTAssertEqual(settings.aasaAppIDs.count, 2)
        XCTAssertEqual(settings.aasaPaths, ["/reset*", "/r/*"])
        XCTAssertEqual(settings.resetPagePath, "/reset")
        XCTAssertNil(try HTTPOptions.endpoint(configuration))
        let defaults = try Configuration(arguments: [], environment: [:], options: HTTPOptions.all)
        XCTAssertEqual(try HTTPOptions.endpoint(defaults), Endpoint(host: "127.0.0.1", port: 7480))
        let bad = try Configuration(arguments: ["--aasa-app-ids", "nodot"], environment: [:], options: HTTPOptions.all)
        XCTAssertThrowsError(try HTTPGatewayDoor.Settings(bad))
    }
}
