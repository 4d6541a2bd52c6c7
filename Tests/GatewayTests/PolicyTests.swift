import Contract
@testable import Gateway
import LineProtocol
import Platform
import Runtime
import ServerTestSupport
import TestSupport
import XCTest


/// The policy table, enforced for every public method through a real listener and fake services.
final class PolicyTests: XCTestCase {
    static let internalMethods = [
        "identity.introspect", "identity.elevate", "identity.revoke_all", "identity.set_password", "identity.user",
        "identity.find_by_email", "identity.check_password", "identity.record", "accounts.audit", "accounts.deposit",
        "identity.health", "identity.metrics", "verification.health", "verification.metrics",
        "accounts.health", "accounts.metrics", "reset.metrics", "reset.health", "gateway.metrics", "gateway.nope", "nodot", "", "identity.",
        ".login", "identity.login.extra",
    ]

    private var loopThread: LoopThread!
    private var fakes: [String: FakeService] = [:]
    private var gateway: GatewayUnderTest!

    override func setUpWithError() throws {
        loopThread = try LoopThread()
        for service in PolicyTable.services {
            fakes[service] = try FakeService(service: service, replicaID: "\(service)-1", loopThread: loopThread, extraMethods: Self.internalMethods)
        }
        addSessions()
        gateway = try GatewayUnderTest(endpoints: fakes.mapValues { [$0.endpoint] })
    }

    override func tearDown() {
        gateway?.shutdown()
        loopThread?.shutdown()
        gateway = nil
        loopThread = nil
        fakes = [:]
    }

    /// Four kinds of session: one that owes a factor (a password on a new device), one that owes
    /// nothing at aal 1, one at aal 2 passed just now, one at aal 2 passed 700 s ago (window 600 s).
    private func addSessions() {
        let identity = fakes["identity"]!
        identity.addSession(token: "lks_owing", sessionID: "s1", aal: 1, requiredFactors: ["sms"])
        identity.addSession(token: "lks_settled", sessionID: "s2", aal: 1)
        identity.addSession(token: "lks_fresh", sessionID: "s3", aal: 2)
        identity.addSession(token: "lks_stale", sessionID: "s4", aal: 2, stepUpAgeSeconds: 700)
    }

    /// Which of the four sessions each access lets through.
    private static let admitted: [MethodPolicy.Access: Set<String>] = [
        .owesFactorsAllowed: ["lks_owing", "lks_settled", "lks_fresh", "lks_stale"],
        .session: ["lks_settled", "lks_fresh", "lks_stale"],
        .recentStepUp: ["lks_fresh"],
    ]

    func testEveryPublicMethodIsForwardedOnlyWithTheAccessItNeeds() throws {
        let client = try gateway.client()
        let tokens = ["lks_owing", "lks_settled", "lks_fresh", "lks_stale"]
        for (method, policy) in PolicyTable.methods.sorted(by: { $0.key < $1.key }) where !policy.isLocal {
            let anonymous = try client.call(method, ["request_id": "vr_x_1"])
            let forged = try client.call(method, ["session": "lks_forged"])
            if policy.access == .open {
                XCTAssertEqual(anonymous.result?["served"]?.stringValue, method, method)
                continue
            }
            XCTAssertEqual(anonymous.reason, "unauthenticated", method)
            XCTAssertEqual(forged.reason, "unauthenticated", method)
            let admitted = try XCTUnwrap(Self.admitted[policy.access], method)
            for token in tokens {
                let answer = try client.call(method, ["session": .string(token), "request_id": "vr_x_1"])
                if admitted.contains(token) && method == DataExportContract.export.name {
                    // Forwarded (counted below), but the fake's answer is no export: the composition refuses it.
                    XCTAssertEqual(answer.reason, "unavailable", "\(method) \(token)")
                } else if admitted.contains(token) {
                    XCTAssertEqual(answer.result?["served"]?.stringValue, method, "\(method) \(token)")
                } else {
                    XCTAssertEqual(answer.reason, "step_up_required", "\(method) \(token)")
                    XCTAssertEqual(answer.error?.code, 403, method)
                    let detail = token == "lks_owing" ? "factors_owed" : "recent_step_up"
                    XCTAssertEqual(answer.error?.data?["detail"]?.stringValue, detail, "\(method) \(token)")
                    if token == "lks_owing" { XCTAssertEqual(answer.error?.data?["required_factors"], ["sms"], method) }
                }
                // identity.logout ends the fake's sessions: bring them back.
                addSessions()
            }
        }
        // Nothing reached a service without the access it needs.
        for (method, policy) in PolicyTable.methods where policy.access != .open && !policy.isLocal {
            let service = String(method.split(separator: ".")[0])
            XCTAssertEqual(fakes[service]!.log.count(method), Self.admitted[policy.access]!.count, method)
        }
    }

    func testAStaleCachedRefusalIsCheckedAgainBeforeRefusing() throws {
        let client = try gateway.client()
        XCTAssertEqual(try client.call("accounts.balances", ["session": "lks_owing"]).reason, "step_up_required")
        // The factor passed elsewhere (verification.check on another connection): identity now says so.
        fakes["identity"]!.addSession(token: "lks_owing", sessionID: "s1", aal: 2)
        XCTAssertEqual(try client.call("accounts.balances", ["session": "lks_owing"]).result?["served"], "accounts.balances")
        XCTAssertEqual(try client.call("identity.enroll_key", ["session": "lks_owing"]).result?["served"], "identity.enroll_key")
    }

    func testInternalAndUnknownMethodsAreNotFoundAndNeverForwarded() throws {
        let client = try gateway.client()
        for method in Self.internalMethods {
            let answer = try client.call(method, ["session": "lks_fresh", "user_id": "u1"])
            XCTAssertEqual(answer.error?.code, -32601, method)
        }
        for service in PolicyTable.services {
            let fake = fakes[service]!
            let forwarded = fake.log.total - fake.log.count("\(service).health") - fake.log.count("identity.introspect")
            XCTAssertEqual(forwarded, 0, service)
        }
        XCTAssertEqual(fakes["identity"]!.log.count("identity.introspect"), 0, "unknown methods are refused before any session check")
    }

    func testGatewayMethodsAnswerLocally() throws {
        let client = try gateway.client()
        XCTAssertEqual(try client.call("gateway.ping").result, ["pong": true])
        try gateway.waitUntilUp("identity", replicas: 1)
        try gateway.waitUntilUp("accounts", replicas: 1)
        XCTAssertEqual(try client.call("gateway.health").result, ["status": "ok"])
        let health = gateway.gateway.healthJSON
        XCTAssertEqual(health["status"]?.stringValue, "ok")
        XCTAssertEqual(health["services"]?["identity"]?["replicas"]?.arrayValue?.first?["replica_id"]?.stringValue, "identity-1")
        XCTAssertEqual(health["services"]?["accounts"]?["up"]?.intValue, 1)
        _ = try client.call("identity.introspect")
        _ = try client.call("accounts.balances", ["session": "lks_settled"])
        let metrics = gateway.gateway.metricsJSON
        XCTAssertEqual(metrics["methods"]?["unknown"]?["errors"]?["method_not_found"]?.intValue, 1)
        XCTAssertEqual(metrics["methods"]?["accounts.balances"]?["count"]?.intValue, 1)
        XCTAssertNotNil(metrics["methods"]?["accounts.balances"]?["p99_us"]?.intValue)
    }

    func testServicesSeeTheGatewaysMetaNeverTheClients() throws {
        let client = try gateway.client()
        let answer = try client.call("accounts.balances", ["session": "lks_settled"], meta: RequestMeta(client: "203.0.113.9", requestID: RequestID("forged-id")))
        XCTAssertEqual(answer.result?["client"]?.stringValue, "127.0.0.1")
        let requestID = try XCTUnwrap(answer.result?["request_id"]?.stringValue)
        XCTAssertNotEqual(requestID, "forged-id")
        XCTAssertTrue(requestID.hasPrefix("gateway-"), requestID)
        // The introspection carried the same request id.
        XCTAssertEqual(fakes["identity"]!.log.lastContext(of: "identity.introspect")?.requestID, requestID)
    }

    func testAccessLogHasOneLinePerRequestAndNoParams() throws {
        let client = try gateway.client()
        _ = try client.call("accounts.balances", ["session": "lks_settled"])
        _ = try client.call("identity.login", ["username": "alice", "password": "hunter2-secret"])
        let text = gateway.accessLines.text + gateway.logSink.capturedText
        let lines = text.split(separator: "\n").filter { $0.contains(#""msg":"request""#) }
        XCTAssertEqual(lines.count, 2)
        for line in lines {
            let json = try JSONParser.parse(Array(line.utf8), limits: .default)
            XCTAssertNotNil(json["ts"]?.stringValue)
            XCTAssertEqual(json["service"]?.stringValue, "gateway")
        }
        XCTAssertTrue(lines[0].contains(#""rpc.method":"accounts.balances""#))
        XCTAssertTrue(lines[0].contains(#""net.client":"127.0.0.1""#))
        XCTAssertTrue(lines[0].contains("rpc.request_id"))
        XCTAssertTrue(lines[0].contains("rpc.duration_us"))
        XCTAssertFalse(text.contains("hunter2"))
        XCTAssertFalse(text.contains("lks_settled"))
    }

    func testRequestIDParsing() {
        XCTAssertEqual(PolicyTable.replicaID(fromRequestID: "vr_a_123"), "a")
        XCTAssertEqual(PolicyTable.replicaID(fromRequestID: "vr_verif-2_x_y"), "verif-2")
        XCTAssertNil(PolicyTable.replicaID(fromRequestID: "vr__x"))
        XCTAssertNil(PolicyTable.replicaID(fromRequestID: "vr_A_x"))
        XCTAssertNil(PolicyTable.replicaID(fromRequestID: "tr_a_x"))
        XCTAssertNil(PolicyTable.replicaID(fromRequestID: "vr_abc"))
    }

    func testTableCoversTheDesignsPublicMethods() {
        let design = [
            "gateway.ping", "gateway.health", "identity.register", "identity.login", "identity.logout", "identity.sessions",
            "identity.revoke", "identity.preferences", "identity.challenge", "identity.enroll_key", "identity.verify_key",
            "identity.key_login", "identity.keys", "identity.revoke_key", "verification.start", "verification.check",
            "verification.cancel", "verification.next", "accounts.balances", "accounts.transfer", "accounts.confirm",
            "accounts.history", "reset.request", "reset.validate", "reset.complete",
        ]
        for method in design { XCTAssertNotNil(PolicyTable.policy(for: method), method) }
        XCTAssertEqual(PolicyTable.policy(for: "identity.enroll_key")?.access, .recentStepUp)
        for method in ["identity.revoke", "identity.revoke_key"] { XCTAssertEqual(PolicyTable.policy(for: method)?.access, .recentStepUp, method) }
        XCTAssertEqual(PolicyTable.policy(for: "accounts.transfer")?.retry, .withIdempotencyKey)
    }
}

/// The seam for the HTTP door: the same dispatch path, called without a socket.
final class DispatchSeamTests: XCTestCase {
    func testADoorWithoutASocketGetsTheSamePolicy() throws {
        let loopThread = try LoopThread()
        defer { loopThread.shutdown() }
        let gateway = Gateway.make(
            loop: loopThread.loop, endpoints: ["identity": [Endpoint(host: "127.0.0.1", port: 1)]], settings: .unlimitedForTests,
            metrics: Metrics(), logger: Logger(service: "gateway", sink: LogSink()), accessLog: AccessLog(replicaID: "gateway") { _ in })
        func call(_ method: String, _ params: JSON?) -> Result<JSON, RPCError> {
            let box = ResultBox<Result<JSON, RPCError>>()
            let context = gateway.makeContext(method: method, client: "198.51.100.7", timeoutMilliseconds: 2000)
            XCTAssertTrue(context.requestID.hasPrefix("gw-"))
            loopThread.loop.execute {
                gateway.dispatch(RPCRequest(method: method, params: params, id: .int(1)), context: context) { box.set($0) }
            }
            return box.wait()
        }
        XCTAssertEqual(try call("gateway.ping", nil).get(), ["pong": true])
        guard case .failure(let notFound) = call("identity.introspect", ["session": "x"]) else { return XCTFail("forwarded") }
        XCTAssertEqual(notFound.code, -32601)
        guard case .failure(let noSession) = call("accounts.balances", nil) else { return XCTFail("forwarded") }
        XCTAssertEqual(noSession.reason, .unauthenticated)
    }
}
