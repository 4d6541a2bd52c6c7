import Foundation
import LineProtocol
import Platform
import RPC
import StackLauncher
import TestSupport
import XCTest

/// The gateway executable in front of the real service executables.
final class GatewayEndToEndTests: XCTestCase {
    private var launched: [LaunchedProcess] = []
    private var fakeIdentity: FakeIdentity?
    private var stack: Stack?
    private var directory: String!

    override func setUpWithError() throws { directory = try makeScratchDirectory("gateway-e2e") }

    override func tearDown() {
        for process in launched.reversed() { process.stop() }
        stack?.stop()
        fakeIdentity?.stop()
        try? FileManager.default.removeItem(atPath: directory)
        // XCTest keeps test case objects alive: let go of what they hold.
        launched = []
        stack = nil
        fakeIdentity = nil
    }

    private func launch(_ executable: String, name: String, _ arguments: [String]) throws -> LaunchedProcess {
        let process = try LaunchedProcess(executable, name: name, arguments: arguments, directory: directory)
        launched.append(process)
        return process
    }

    private func startGateway(identity: String, verification: String, accounts: String, reset: String, extra: [String] = []) throws -> LaunchedProcess {
        try launch("gateway", name: "gateway", [
            "--identity", identity, "--verification", verification, "--accounts", accounts, "--reset", reset,
            "--health-interval-ms", "200", "--rate-limits", "auth=0:0,codes=0:0,default=0:0", "--http-listen", "off",
            "--metrics-listen", "127.0.0.1:0",
        ] + extra)
    }

    func testFullStackInternalMethodsAreUnreachableAndHealthListsEveryReplica() throws {
        var options = Stack.Options(binDirectory: Stack.siblingBinaryDirectory(), dataDirectory: directory + "/stack")
        options.verificationReplicas = 2
        let stack = try Stack.start(options)
        self.stack = stack
        let metricsListener = try XCTUnwrap(stack.metricsEndpoint(), "the stack's gateway has a metrics listener")
        let health = try waitForReplicas(metricsListener, service: "verification", count: 2)
        let client = try LineClient(stack.gateway)
        XCTAssertEqual(try client.result("gateway.ping"), ["pong": true])
        let replicaIDs = health["services"]?["verification"]?["replicas"]?.arrayValue?.compactMap { $0["replica_id"]?.stringValue }
        XCTAssertEqual(Set(replicaIDs ?? []), ["verification", "verification-2"])
        for service in ["identity", "accounts", "reset"] {
            _ = try waitForReplicas(metricsListener, service: service, count: 1)
        }
        let internalMethods = [
            "identity.introspect", "identity.elevate", "identity.revoke_all", "identity.set_password", "identity.user",
            "identity.find_by_email", "identity.check_password", "identity.record", "accounts.audit", "accounts.deposit",
            "identity.health", "identity.metrics", "verification.metrics", "accounts.health", "reset.health", "gateway.metrics",
        ]
        let before = try servedCount(stack.endpoint("identity"), service: "identity", methods: ["unknown", "identity.introspect", "identity.ping"])
        for method in internalMethods {
            let answer = try client.call(method, ["session": "lks_x", "user_id": "1", "session_id": "1", "factor": "sms"])
            XCTAssertEqual(answer.gatewayError?.code, -32601, method)
        }
        let after = try servedCount(stack.endpoint("identity"), service: "identity", methods: ["unknown", "identity.introspect", "identity.ping"])
        XCTAssertEqual(after, before, "nothing internal reached identity")
        XCTAssertEqual(try client.call("accounts.balances").gatewayError?.reason, .unauthenticated)
        XCTAssertEqual(try client.result("identity.ping"), ["pong": true], "inner pings cross the hop")
        // The access log: one line per request (written in batches every 100 ms), never params.
        waitUntil("the access log has the request") { stack.member("gateway").log.contains(#""rpc.method":"accounts.balances""#) }
        XCTAssertFalse(stack.member("gateway").log.contains("lks_x"))
    }

    /// The public methods (protocol/methods.json) and what they need, checked against the real gateway in front of
    /// real verification, accounts and reset (identity is faked for `introspect`). `step_up` is a
    /// recent one: `lks_aal2` passed its factor just now; `lks_aal1` owes nothing.
    static let publicMethods: [(method: String, needs: String)] = [
        ("identity.register", "open"), ("identity.login", "open"), ("identity.logout", "session"),
        ("identity.sessions", "session"), ("identity.revoke", "step_up"), ("identity.preferences", "session"),
        ("identity.challenge", "open"), ("identity.enroll_key", "step_up"), ("identity.verify_key", "session"),
        ("identity.key_login", "open"), ("identity.keys", "session"), ("identity.revoke_key", "step_up"),
        ("verification.start", "session"), ("verification.check", "session"), ("verification.cancel", "session"),
        ("verification.next", "session"), ("accounts.balances", "session"), ("accounts.transfer", "session"),
        ("accounts.confirm", "session"), ("accounts.history", "session"), ("reset.request", "open"),
        ("reset.validate", "open"), ("reset.complete", "open"),
    ]

    func testEveryPublicMethodIsEnforcedInFrontOfTheRealServices() throws {
        let identityMethods = Self.publicMethods.map(\.method).filter { $0.hasPrefix("identity.") }
        let identity = try FakeIdentity(sessions: ["lks_aal1": 1, "lks_aal2": 2], servedMethods: identityMethods)
        fakeIdentity = identity
        let identityList = identity.endpoint.description
        let verification = try launch("verification", name: "verification", ["--replica-id", "v1", "--identity", identityList])
        let accounts = try launch("accounts", name: "accounts", ["--identity", identityList, "--verification", verification.endpoint.description])
        let reset = try launch("reset", name: "reset", ["--identity", identityList])
        let gateway = try startGateway(
            identity: identity.endpoint.description, verification: verification.endpoint.description,
            accounts: accounts.endpoint.description, reset: reset.endpoint.description)
        _ = try waitForReplicas(try gateway.metricsEndpoint, service: "verification", count: 1)
        let client = try LineClient(gateway.endpoint)
        let replicas = ["verification": verification.endpoint, "accounts": accounts.endpoint, "reset": reset.endpoint]
        func served(_ method: String) throws -> Int64 {
            let service = String(method.split(separator: ".")[0])
            guard let endpoint = replicas[service] else { return 0 }
            return try servedCount(endpoint, service: service, methods: ["unknown", method])
        }
        for (method, needs) in Self.publicMethods {
            let before = try served(method)
            let anonymous = try client.call(method, ["request_id": "vr_v1_1"])
            let aal1 = try client.call(method, ["session": "lks_aal1", "request_id": "vr_v1_1"])
            let aal2 = try client.call(method, ["session": "lks_aal2", "request_id": "vr_v1_1"])
            let refusals = [anonymous, aal1, aal2].map { $0.gatewayError?.reasonText }
            switch needs {
            case "open":
                XCTAssertFalse(refusals.contains { $0 == "unauthenticated" || $0 == "step_up_required" }, method)
            case "session":
                XCTAssertEqual(refusals[0], "unauthenticated", method)
                XCTAssertFalse(refusals[1...].contains { $0 == "unauthenticated" || $0 == "step_up_required" }, method)
            default:
                XCTAssertEqual(refusals[0], "unauthenticated", method)
                XCTAssertEqual(refusals[1], "step_up_required", method)
                XCTAssertNotEqual(refusals[2], "step_up_required", method)
            }
            for answer in [anonymous, aal1, aal2] {
                XCTAssertNotEqual(answer.gatewayError?.reasonText, "unavailable", method)
                XCTAssertNotEqual(answer.gatewayError?.reason, .rateLimited, method)
            }
            if method.hasPrefix("identity.") {
                let forwarded = [anonymous, aal1, aal2].filter { $0.gatewayResult?["served"]?.stringValue == method }.count
                XCTAssertEqual(forwarded, ["open": 3, "session": 2, "step_up": 1][needs], method)
            } else {
                XCTAssertEqual(try served(method) - before, ["open": 3, "session": 2, "step_up": 1][needs]!, method)
            }
        }
    }

    func testVerificationStartsSpreadAndChecksLandOnTheOwnerReplica() throws {
        let identity = try FakeIdentity(sessions: ["lks_alice": 1])
        fakeIdentity = identity
        let replicaA = try launch("verification", name: "va", ["--replica-id", "va", "--identity", identity.endpoint.description])
        let replicaB = try launch("verification", name: "vb", ["--replica-id", "vb", "--identity", identity.endpoint.description])
        let gateway = try startGateway(
            identity: identity.endpoint.description, verification: "\(replicaA.endpoint),\(replicaB.endpoint)",
            accounts: "127.0.0.1:1", reset: "127.0.0.1:1")
        _ = try waitForReplicas(try gateway.metricsEndpoint, service: "verification", count: 2)
        let counted = ["unknown", "verification.check", "verification.start"]
        let client = try LineClient(gateway.endpoint)
        let startA = try servedCount(replicaA.endpoint, service: "verification", methods: counted)
        let startB = try servedCount(replicaB.endpoint, service: "verification", methods: counted)
        for index in 0..<9 {
            let owner = index < 3 ? "va" : "vb"
            let answer = try client.call("verification.check", ["session": "lks_alice", "request_id": .string("vr_\(owner)_\(index)"), "code": "000000"])
            XCTAssertNotEqual(answer.gatewayError?.reason, .unavailable)
        }
        XCTAssertEqual(try servedCount(replicaA.endpoint, service: "verification", methods: counted) - startA, 3)
        XCTAssertEqual(try servedCount(replicaB.endpoint, service: "verification", methods: counted) - startB, 6)
        for _ in 0..<10 { _ = try client.call("verification.start", ["session": "lks_alice", "channel": "sms"]) }
        XCTAssertEqual(try servedCount(replicaA.endpoint, service: "verification", methods: counted) - startA, 3 + 5)
        XCTAssertEqual(try servedCount(replicaB.endpoint, service: "verification", methods: counted) - startB, 6 + 5)
    }

    func testKillNineOfOneIdentityReplicaUnderLoadLosesNoRetryableRequest() throws {
        let identityA = try launch("identity", name: "id-a", ["--replica-id", "id-a"])
        let identityB = try launch("identity", name: "id-b", ["--replica-id", "id-b"])
        let gateway = try startGateway(
            identity: "\(identityA.endpoint),\(identityB.endpoint)", verification: "127.0.0.1:1", accounts: "127.0.0.1:1", reset: "127.0.0.1:1")
        _ = try waitForReplicas(try gateway.metricsEndpoint, service: "identity", count: 2)
        let tally = LoadTally()
        let gatewayEndpoint = gateway.endpoint
        let stopAt = Date().addingTimeInterval(3)
        let group = DispatchGroup()
        for worker in 0..<6 {
            group.enter()
            Thread {
                defer { group.leave() }
                guard let client = try? LineClient(gatewayEndpoint, timeoutMilliseconds: 5000) else { return tally.record(retryable: true, answer: nil, milliseconds: 0) }
                var index = 0
                while Date() < stopAt {
                    index += 1
                    // Reads (safe to retry) and writes (never repeated) interleaved.
                    let retryable = (index + worker) % 2 == 0
                    let method = retryable ? "identity.challenge" : "identity.login"
                    let started = MonotonicClock.nowMilliseconds()
                    let answer = try? client.call(method, ["username": "alice", "device_id": "d1", "password": "x"])
                    tally.record(retryable: retryable, answer: answer, milliseconds: MonotonicClock.nowMilliseconds() - started)
                }
            }.start()
        }
        waitUntil("the load runs before the kill") { tally.summary.retryableTotal >= 20 }
        identityA.kill()
        group.wait()
        let summary = tally.summary
        XCTAssertGreaterThan(summary.retryableTotal, 100)
        XCTAssertEqual(summary.retryableFailed, 0, "every read was answered by a live replica")
        // No `timeout` among them either: a call that waited for the dead replica would be one.
        XCTAssertEqual(summary.writesOther, 0, "writes get an answer or a fast `unavailable`, nothing else")
        let health = try OperatorListener.health(try gateway.metricsEndpoint)
        XCTAssertEqual(health["services"]?["identity"]?["up"]?.intValue, 1)
        XCTAssertEqual(health["status"]?.stringValue, "degraded")
        print("kill -9 under load: \(summary)")
    }

    func testServiceTokenGuardsTheInternalLinks() throws {
        let identity = try launch("identity", name: "identity", ["--service-token", "internal-secret-1"])
        let gateway = try startGateway(
            identity: identity.endpoint.description, verification: "127.0.0.1:1", accounts: "127.0.0.1:1", reset: "127.0.0.1:1",
            extra: ["--service-token", "internal-secret-1"])
        let health = try waitForReplicas(try gateway.metricsEndpoint, service: "identity", count: 1)
        XCTAssertEqual(health["services"]?["identity"]?["replicas"]?.arrayValue?.first?["replica_id"]?.stringValue, "identity")
        XCTAssertEqual(try LineClient(gateway.endpoint).result("identity.ping"), ["pong": true])
        // Straight to the service: without the token, or with a wrong one, nothing is served
        // (ping and health stay open for orchestrator health checks).
        let direct = try LineClient(identity.endpoint)
        XCTAssertEqual(try direct.call("identity.metrics").gatewayError?.reason, .unauthenticated)
        XCTAssertEqual(try direct.call("identity.introspect", ["session": "lks_x"]).gatewayError?.reason, .unauthenticated)
        try direct.send(Array(#"{"jsonrpc":"2.0","id":2,"method":"identity.metrics","meta":{"token":"internal-secret-2"}}"#.utf8))
        XCTAssertTrue(String(decoding: try XCTUnwrap(try direct.readLine()), as: UTF8.self).contains("unauthenticated"))
        try direct.send(Array(#"{"jsonrpc":"2.0","id":3,"method":"identity.metrics","meta":{"token":"internal-secret-1"}}"#.utf8))
        XCTAssertTrue(String(decoding: try XCTUnwrap(try direct.readLine()), as: UTF8.self).contains("uptime_s"))
        XCTAssertEqual(try direct.result("identity.health")["status"]?.stringValue, "ok")
        XCTAssertFalse(identity.log.contains("internal-secret"), "the token never reaches a log")
        XCTAssertFalse(gateway.log.contains("internal-secret"))
    }

    func testTLSListenerOfTheExecutableServesOpenSSLClients() throws {
        let certificate = directory + "/cert.pem"
        let key = directory + "/key.pem"
        let generate = Process()
        generate.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        generate.arguments = [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-subj", "/CN=localhost", "-days", "1", "-keyout", key, "-out", certificate,
        ]
        generate.standardError = FileHandle.nullDevice
        try generate.run()
        generate.waitUntilExit()
        XCTAssertEqual(generate.terminationStatus, 0)
        let gateway = try startGateway(
            identity: "127.0.0.1:1", verification: "127.0.0.1:1", accounts: "127.0.0.1:1", reset: "127.0.0.1:1",
            extra: ["--tls-cert", certificate, "--tls-key", key])
        let script = """
            import socket, ssl, sys
            context = ssl.create_default_context(cafile=sys.argv[2])
            with socket.create_connection(("127.0.0.1", int(sys.argv[1]))) as raw:
                with context.wrap_socket(raw, server_hostname="localhost") as tls:
                    tls.sendall(b'{"jsonrpc":"2.0","id":1,"method":"gateway.ping"}\\n')
                    data = b""
                    while b"\\n" not in data:
                        data += tls.recv(4096)
                    print(tls.version(), data.decode().strip())
            """
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", "-c", script, String(gateway.endpoint.port), certificate]
        let output = Pipe()
        python.standardOutput = output
        try python.run()
        python.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(text.trimmingCharacters(in: .whitespacesAndNewlines), #"TLSv1.3 {"jsonrpc":"2.0","id":1,"result":{"pong":true}}"#)
    }

    func testBothDoorsShareOneTLSContextAndOnePolicy() throws {
        let certificate = directory + "/cert.pem"
        let key = directory + "/key.pem"
        XCTAssertEqual(try runProgram("/usr/bin/env", [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-subj", "/CN=localhost", "-days", "1", "-keyout", key, "-out", certificate,
        ]).status, 0)
        let gateway = try startGateway(
            identity: "127.0.0.1:1", verification: "127.0.0.1:1", accounts: "127.0.0.1:1", reset: "127.0.0.1:1",
            extra: ["--tls-cert", certificate, "--tls-key", key, "--http-listen", "127.0.0.1:0"])
        let log = gateway.log
        let marker = try XCTUnwrap(log.range(of: "\"http.listen\":\""))
        let http = String(log[marker.upperBound...].prefix { $0 != "\"" })
        let body = #"{"jsonrpc":"2.0","id":1,"method":"identity.introspect","params":{"session":"lks_x"}}"#
        let rpc = try runProgram("/usr/bin/env", [
            "curl", "-sS", "--cacert", certificate, "--resolve", "localhost:\(http.split(separator: ":").last!):127.0.0.1",
            "-H", "Content-Type: application/json", "--data", body, "https://localhost:\(http.split(separator: ":").last!)/rpc",
        ])
        XCTAssertTrue(rpc.output.contains("-32601"), "internal methods are refused at the HTTP door too: \(rpc.output)")
        let plain = try runProgram("/usr/bin/env", ["curl", "-sS", "--max-time", "3", "http://\(http)/healthz"])
        XCTAssertFalse(plain.output.contains("ok"), "plain HTTP is refused on a TLS door")
    }

    func testSlowlorisAgainstTheExecutableIsCutOffWhileOthersAreServed() throws {
        let gateway = try startGateway(
            identity: "127.0.0.1:1", verification: "127.0.0.1:1", accounts: "127.0.0.1:1", reset: "127.0.0.1:1",
            extra: ["--line-timeout-ms", "500", "--write-timeout-ms", "500"])
        let slow = try LineClient(gateway.endpoint, timeoutMilliseconds: 3000)
        try slow.sendRaw(Array(#"{"jsonrpc":"2.0","#.utf8))
        let other = try LineClient(gateway.endpoint)
        // Others are served while the slow client holds its half line: proven by the answers. The
        // pause is the scenario (a second of pings spans the slow client's 500 ms line timeout).
        for _ in 0..<50 {
            XCTAssertEqual(try other.result("gateway.ping"), ["pong": true])
            usleep(20_000)
        }
        XCTAssertNil(try? slow.readLine() ?? nil, "the slow client was disconnected")
    }
}

/// Counts outcomes of the load in the failover test. Thread-safe.
final class LoadTally: @unchecked Sendable {
    struct Summary: CustomStringConvertible {
        var retryableTotal = 0
        var retryableFailed = 0
        var writesTotal = 0
        var writesUnavailable = 0
        var writesOther = 0
        var worstMilliseconds: Int64 = 0
        var description: String {
            "reads \(retryableTotal) (failed \(retryableFailed)), writes \(writesTotal) (unavailable \(writesUnavailable), other failures \(writesOther)), worst \(worstMilliseconds) ms"
        }
    }

    private let lock = NSLock()
    private var totals = Summary()

    func record(retryable: Bool, answer: RPCResponse?, milliseconds: Int64) {
        lock.lock()
        defer { lock.unlock() }
        totals.worstMilliseconds = max(totals.worstMilliseconds, milliseconds)
        // An answer from a replica (a result, or its own error such as method_not_found) counts as served.
        let reason = answer?.gatewayError?.reasonText
        let failedInGateway = answer == nil || reason == "unavailable" || reason == "timeout" || reason == "overloaded"
        if retryable {
            totals.retryableTotal += 1
            if failedInGateway { totals.retryableFailed += 1 }
        } else {
            totals.writesTotal += 1
            if reason == "unavailable" { totals.writesUnavailable += 1 } else if failedInGateway { totals.writesOther += 1 }
        }
    }

    var summary: Summary {
        lock.lock()
        defer { lock.unlock() }
        return totals
    }
}
