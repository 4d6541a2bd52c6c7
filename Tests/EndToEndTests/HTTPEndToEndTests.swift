import Foundation
import LineProtocol
import Platform
import RPC
import ServiceKit
import StackLauncher
import TestSupport
import XCTest

/// The gateway's HTTP door against the running stack, driven by curl (a real client): the seed's
/// password-reset flow, a login + transfer, and hostile HTTP. Skips when the gateway executable
/// does not start the door (it logs `http listening` with `http.listen` when it does).
final class HTTPEndToEndTests: StackTestCase {
    private var base = ""

    override func stackOptions(_ options: inout Stack.Options) {
        options.environment["LATCHKEY_AASA_APP_IDS"] = "ABCDE12345.com.example.bank"
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        let endpoint = try XCTUnwrap(stack.httpGateway, "the gateway runs the HTTP door on an ephemeral port")
        base = "http://\(endpoint.description)"
    }

    // MARK: curl

    private func curl(_ arguments: [String]) throws -> (status: Int, body: JSON?, headers: String) {
        let response = try Curl.run(arguments)
        return (response.status, try? JSONParser.parse(response.body), response.head)
    }

    private func post(_ path: String, _ body: JSON, bearer: String? = nil) throws -> (status: Int, body: JSON?, headers: String) {
        var arguments = ["-H", "Content-Type: application/json", "--data", body.text]
        if let bearer { arguments += ["-H", "Authorization: Bearer \(bearer)"] }
        return try curl(arguments + [base + path])
    }

    private func register(_ username: String, password: String) throws -> String {
        let registered = try post("/v1/identity/register", [
            "username": .string(username), "password": .string(password),
            "email": .string("\(username)@example.com"), "phone": "+15555550100",
        ])
        XCTAssertEqual(registered.status, 200, "\(String(describing: registered.body))")
        return try XCTUnwrap(registered.body?["result"]?["user_id"]?.stringValue)
    }

    private func waitForOutbox(_ match: (JSON) -> Bool) throws -> JSON {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let message = outbox().last(where: match) { return message }
            usleep(50_000)
        }
        throw ConfigurationError("no matching message in the outbox")
    }

    private func firstMatch(_ pattern: String, in text: String) -> String? {
        guard let range = text.range(of: pattern, options: .regularExpression) else { return nil }
        return String(text[range])
    }

    // MARK: Flows

    func testSeedPasswordResetFlowOverCurl() throws {
        _ = try register("resetter", password: "first correct horse battery")
        let request = try post("/auth/password/request", ["email": "resetter@example.com"])
        XCTAssertEqual(request.status, 200)
        XCTAssertTrue(request.headers.lowercased().contains("referrer-policy: no-referrer"))
        XCTAssertEqual(try post("/auth/password/request", ["email": "nobody@example.com"]).status, 200, "no enumeration")

        let mail = try waitForOutbox { $0["to"] == "resetter@example.com" && ($0["text"]?.stringValue ?? "").contains("lkr_") }
        let token = try XCTUnwrap(firstMatch("lkr_[A-Za-z0-9_-]+", in: mail["text"]?.stringValue ?? ""))
        XCTAssertEqual(try post("/auth/password/validate", ["token": .string(token)]).status, 200)
        XCTAssertEqual(try post("/auth/password/validate", ["token": "lkr_not-a-real-token"]).status, 400)
        XCTAssertEqual(try post("/auth/password/reset", ["token": .string(token), "password": "short"]).status, 422)
        XCTAssertEqual(try post("/auth/password/reset", ["token": .string(token), "password": "second correct horse battery"]).status, 200)
        XCTAssertEqual(try post("/auth/password/validate", ["token": .string(token)]).status, 400, "single use")

        XCTAssertEqual(try post("/v1/identity/login", ["username": "resetter", "password": "first correct horse battery", "device_id": "iphone-1"]).status, 401)
        XCTAssertEqual(try post("/v1/identity/login", ["username": "resetter", "password": "second correct horse battery", "device_id": "iphone-1"]).status, 200)
    }

    func testLoginAndTransferOverCurl() throws {
        let userID = try register("payer", password: "plum orchard maple 42")
        try provePhone(userID: userID, phone: "+15555550100")
        let accounts = try direct("accounts")
        _ = try accounts.result("accounts.deposit", ["user_id": .string(userID), "account": "checking", "amount": 500_000, "idempotency_key": "seed-1"])

        let login = try post("/v1/identity/login", ["username": "payer", "password": "plum orchard maple 42", "device_id": "iphone-1"])
        XCTAssertEqual(login.status, 200)
        let session = try XCTUnwrap(login.body?["result"]?["session"]?.stringValue)
        XCTAssertEqual(try curl(["-X", "POST", "-H", "Authorization: Bearer \(session)", base + "/v1/accounts/balances"]).status, 403, "a new device owes sms first")
        try passLoginFactor(try gateway(), session: .string(session))
        XCTAssertEqual(try curl(["-X", "POST", base + "/v1/accounts/balances"]).status, 401)
        let balances = try curl(["-X", "POST", "-H", "Authorization: Bearer \(session)", base + "/v1/accounts/balances"])
        XCTAssertEqual(balances.status, 200)

        let transfer = try post("/v1/accounts/transfer", ["from": "checking", "to": "saving", "amount": 1250, "idempotency_key": "t-1"], bearer: session)
        XCTAssertEqual(transfer.status, 200, "\(String(describing: transfer.body))")
        let transferID = try XCTUnwrap(transfer.body?["result"]?["transfer_id"]?.stringValue)
        let requestID = try XCTUnwrap(transfer.body?["result"]?["request_id"])
        let message = try waitForOutbox { $0["request_id"] == requestID }
        let code = try XCTUnwrap(firstMatch("[0-9]{4,8}", in: message["text"]?.stringValue ?? ""))
        XCTAssertEqual(try post("/v1/accounts/confirm", ["transfer_id": .string(transferID), "code": "000000"], bearer: session).status, 422)
        let confirmed = try post("/v1/accounts/confirm", ["transfer_id": .string(transferID), "code": .string(code)], bearer: session)
        XCTAssertEqual(confirmed.status, 200, "\(String(describing: confirmed.body))")
        let saving = confirmed.body?["result"]?["accounts"]?.arrayValue?.first { $0["name"] == "saving" }
        XCTAssertEqual(saving?["balance"], 1250)
        XCTAssertEqual(try post("/v1/identity/introspect", ["session": .string(session)]).status, 404, "internal methods stay unreachable")
    }

    /// Over the door: a bearer header on a method that takes no session is ignored, a
    /// misspelt name is refused naming it, and the body's `code` is the status.
    func testParameterNamesOverTheDoor() throws {
        _ = try register("speller", password: "plum orchard maple 42")
        let login = try post(
            "/v1/identity/login", ["username": "speller", "password": "plum orchard maple 42", "device_id": "iphone-1"], bearer: "lks_stale")
        XCTAssertEqual(login.status, 200, "\(String(describing: login.body))")
        let session = try XCTUnwrap(login.body?["result"]?["session"]?.stringValue)
        try passLoginFactor(try gateway(), session: .string(session))
        let misspelt = try post("/v1/identity/preferences", ["sms_verifcation": false], bearer: session)
        XCTAssertEqual(misspelt.status, 400)
        XCTAssertEqual(misspelt.body?["error"]?["code"], 400)
        XCTAssertEqual(misspelt.body?["error"]?["data"]?["reason"], "invalid_params")
        XCTAssertEqual(misspelt.body?["error"]?["data"]?["field"], "sms_verifcation")
        let noSuchMethod = try post("/v1/identity/introspect", [:])
        XCTAssertEqual(noSuchMethod.status, 404)
        XCTAssertEqual(noSuchMethod.body?["error"]?["code"], 404)
    }

    func testHostileHTTPAndTheOtherRoutesOnTheRealGateway() throws {
        XCTAssertEqual(try curl([base + "/healthz"]).status, 200)
        XCTAssertEqual(try curl([base + "/.well-known/apple-app-site-association"]).status, 200)
        let rpc = try post("/rpc", ["jsonrpc": "2.0", "id": 1, "method": "gateway.ping"])
        XCTAssertEqual(rpc.body?["result"]?["pong"], true)

        let endpoint = try XCTUnwrap(Endpoint(String(base.dropFirst("http://".count))))
        let hostile: [String] = [
            "POST /rpc HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "POST /rpc HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
            "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + String(repeating: "b", count: 20_000) + "\r\n\r\n",
            "POST /rpc HTTP/1.1\r\nHost: a\r\nContent-Length: 999999999\r\n\r\n",
        ]
        for request in hostile {
            let status = try rawStatus(endpoint, request)
            XCTAssertTrue([400, 413, 431].contains(status), "\(request.prefix(50).debugDescription) -> \(status)")
        }
        XCTAssertEqual(try curl([base + "/healthz"]).status, 200, "still serving")
    }

    /// An outsider on the public doors sees a liveness answer and no figures; the scraper on the
    /// metrics listener sees every request counted, someone else's confirmation too.
    func testMetricsAndReplicasAreOnlyOnTheMetricsListener() throws {
        let health = try curl([base + "/healthz"])
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(health.body, ["status": "ok"])
        XCTAssertEqual(try curl([base + "/metrics"]).status, 404)
        let line = try LineClient(stack.gateway)
        XCTAssertEqual(try line.result("gateway.health"), ["status": "ok"])
        XCTAssertEqual(try line.call("gateway.metrics").gatewayError?.code, -32601)

        let scraper = "http://\(try XCTUnwrap(stack.metricsEndpoint(), "the stack's gateway has a metrics listener"))"
        let before = PrometheusSamples(try Curl.run([scraper + "/metrics"]).body)
        XCTAssertEqual(try post("/v1/accounts/confirm", ["transfer_id": "tr_x", "code": "123456"], bearer: "lks_someone_else").status, 401)
        let scraped = try Curl.run([scraper + "/metrics"])
        XCTAssertEqual(scraped.status, 200)
        XCTAssertTrue(scraped.head.lowercased().contains("content-type: text/plain; version=0.0.4"), scraped.head)
        let after = PrometheusSamples(scraped.body)
        XCTAssertEqual(after.requests("accounts.confirm"), before.requests("accounts.confirm") + 1)
        let replicas = try curl([scraper + "/healthz"]).body?["services"]?["accounts"]?["replicas"]?.arrayValue
        XCTAssertEqual(replicas?.first?["address"]?.stringValue, stack.endpoint("accounts").description)
    }

    private func rawStatus(_ endpoint: Endpoint, _ request: String) throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(endpoint.port).bigEndian)
        address.sin_addr.s_addr = inet_addr(endpoint.host)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw ConfigurationError("cannot connect to \(endpoint)") }
        let bytes = Array(request.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 12 else { return 0 }
        return Int(String(decoding: buffer[9..<12], as: UTF8.self)) ?? 0
    }
}
