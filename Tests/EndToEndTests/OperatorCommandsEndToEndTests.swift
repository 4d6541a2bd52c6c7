import Foundation
import LineProtocol
import Platform
import RPC
import Secrets
import StackLauncher
import XCTest

/// The operator commands of the real `latchkey` binary against a real stack whose internal
/// calls need the service token: fund a user, unlock a throttled one, list and revoke sessions
/// and keys, read the activity (where every operator action shows), and none of the internal
/// methods behind them answers through the gateway.
final class OperatorCommandsEndToEndTests: StackTestCase {
    static let serviceToken = "operator-e2e-\(UUID().uuidString)"
    static let password = "correct horse battery"

    override func stackOptions(_ options: inout Stack.Options) {
        options.environment["LATCHKEY_SERVICE_TOKEN"] = Self.serviceToken
    }

    // MARK: deposit

    func testDepositFundsANewUserAndTheBalancesShowIt() throws {
        let userID = try register("olga")
        let funded = try latchkey(["deposit", "olga", "checking", "12500", "--idempotency-key", "first-funding", "--json"])
        XCTAssertEqual(funded.status, 0, funded.stderr)
        let answer = try funded.json()
        XCTAssertEqual(answer["balance"], 12_500)
        XCTAssertEqual(answer["user_id"]?.stringValue, userID)
        XCTAssertEqual(answer["idempotency_key"], "first-funding")

        // The same key again books nothing more.
        let repeated = try latchkey(["deposit", "olga", "checking", "12500", "--idempotency-key", "first-funding"])
        XCTAssertEqual(repeated.status, 0, repeated.stderr)
        XCTAssertTrue(repeated.stdout.contains("12500"), repeated.stdout)

        // Without a key, one is made up and printed, so the operator can retry safely.
        let generated = try latchkey(["deposit", "olga", "saving", "700"])
        XCTAssertEqual(generated.status, 0, generated.stderr)
        XCTAssertTrue(generated.stdout.contains("--idempotency-key op_"), generated.stdout)

        let session = try steppedUpSession("olga", device: "olga-phone")
        let balances = try gateway().result("accounts.balances", ["session": session])["accounts"]?.arrayValue
        XCTAssertEqual(balances?.map { $0["balance"] }, [12_500, 700])
    }

    /// Eight operators press enter at once with the same key: the money arrives once.
    func testConcurrentDepositsWithOneKeyBookOnce() throws {
        _ = try register("pavel")
        let runs = try (0..<8).map { _ in
            try OperatorRun.start(toolArguments(["deposit", "pavel", "checking", "5000", "--idempotency-key", "burst", "--json"]), environment: toolEnvironment())
        }
        for run in runs {
            let result = try run.finish(timeoutSeconds: 60)
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(try result.json()["balance"], 5_000, "every answer reports the one booking")
        }
        let session = try steppedUpSession("pavel", device: "pavel-phone")
        XCTAssertEqual(try gateway().result("accounts.balances", ["session": session])["accounts"]?.arrayValue?.first?["balance"], 5_000)
        XCTAssertEqual(try direct("accounts").internalResult("accounts.audit", [:], token: Self.serviceToken)["ok"], true)
    }

    // MARK: unlock

    func testUnlockLetsALockedUserLogInAndEndsTheFailureStreak() throws {
        _ = try register("quinn")
        let gateway = try gateway()
        var reason: String?
        for _ in 0..<10 where reason != "locked" {
            reason = gateway.reason("identity.login", ["username": "quinn", "password": "wrong guess", "device_id": "laptop"])
        }
        XCTAssertEqual(reason, "locked")
        XCTAssertEqual(gateway.reason("identity.login", ["username": "quinn", "password": .string(Self.password), "device_id": "laptop"]), "locked")

        let unlocked = try latchkey(["unlock", "quinn", "--json"])
        XCTAssertEqual(unlocked.status, 0, unlocked.stderr)
        XCTAssertEqual(try unlocked.json()["was_locked"], true)
        XCTAssertGreaterThanOrEqual(try unlocked.json()["failures_cleared"]?.intValue ?? 0, 5)

        // The streak is gone, not only the lock: one more wrong password is an ordinary failure.
        XCTAssertEqual(gateway.reason("identity.login", ["username": "quinn", "password": "wrong again", "device_id": "laptop"]), "invalid_credentials")
        let login = try gateway.result("identity.login", ["username": "quinn", "password": .string(Self.password), "device_id": "laptop"])
        XCTAssertNotNil(login["session"]?.stringValue)
        XCTAssertTrue(try activityEvents("quinn").contains("operator.unlock"))
    }

    // MARK: sessions

    func testRevokeSessionEndsThatSessionAndAllEndsTheRest() throws {
        _ = try register("rosa")
        let gateway = try gateway()
        let phone = try XCTUnwrap(try login(gateway, "rosa", device: "rosa-phone")["session"])
        let laptop = try XCTUnwrap(try login(gateway, "rosa", device: "rosa-laptop")["session"])
        let tablet = try XCTUnwrap(try login(gateway, "rosa", device: "rosa-tablet")["session"])

        let listed = try latchkey(["sessions", "rosa", "--json"])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        let sessions = try XCTUnwrap(try listed.json()["sessions"]?.arrayValue)
        XCTAssertEqual(Set(sessions.compactMap { $0["device_id"]?.stringValue }), ["rosa-phone", "rosa-laptop", "rosa-tablet"])
        XCTAssertFalse(listed.stdout.contains("lks_"), "a token never leaves identity")
        let table = try latchkey(["sessions", "rosa"])
        XCTAssertTrue(table.stdout.contains("SESSION_ID") && table.stdout.contains("rosa-laptop"), table.stdout)

        let phoneID = try XCTUnwrap(sessions.first { $0["device_id"] == "rosa-phone" }?["session_id"]?.stringValue)
        let revoked = try latchkey(["revoke-session", "rosa", phoneID])
        XCTAssertEqual(revoked.status, 0, revoked.stderr)
        XCTAssertEqual(gateway.reason("identity.sessions", ["session": phone]), "unauthenticated")
        XCTAssertNotNil(try gateway.result("identity.sessions", ["session": laptop])["sessions"])

        let again = try latchkey(["revoke-session", "rosa", phoneID])
        XCTAssertEqual(again.status, 1, "an ended session is not found: \(again.stdout)")

        let all = try latchkey(["revoke-session", "rosa", "--all", "--json"])
        XCTAssertEqual(all.status, 0, all.stderr)
        XCTAssertEqual(try all.json()["revoked"], 2)
        XCTAssertEqual(gateway.reason("identity.sessions", ["session": laptop]), "unauthenticated")
        XCTAssertEqual(gateway.reason("identity.sessions", ["session": tablet]), "unauthenticated")
        XCTAssertEqual(try latchkey(["sessions", "rosa", "--json"]).json()["sessions"], [])
        XCTAssertTrue(try activityEvents("rosa").contains("operator.revoke_session"))
    }

    // MARK: keys

    func testRevokeKeyMakesKeyLoginFail() throws {
        _ = try register("sami")
        let device = DeviceKey()
        let session = try steppedUpSession("sami", device: "sami-phone")
        let keyID = try XCTUnwrap(try gateway().result("identity.enroll_key", [
            "session": session, "device_id": "sami-phone", "public_key": device.publicKey, "protection": "biometry",
        ])["key_id"]?.stringValue)
        XCTAssertNotNil(try keyLogin("sami", device: device).outcome.get()["session"], "the key logs in before it is revoked")

        let keys = try latchkey(["keys", "sami", "--json"])
        XCTAssertEqual(keys.status, 0, keys.stderr)
        XCTAssertEqual(try keys.json()["keys"]?.arrayValue?.map { $0["key_id"]?.stringValue }, [keyID])
        XCTAssertTrue(try latchkey(["keys", "sami"]).stdout.contains("biometry"))

        let revoked = try latchkey(["revoke-key", "sami", keyID])
        XCTAssertEqual(revoked.status, 0, revoked.stderr)
        assertError(try keyLogin("sami", device: device), "invalid_credentials")
        XCTAssertEqual(try latchkey(["keys", "sami", "--json"]).json()["keys"], [])
        XCTAssertEqual(try latchkey(["revoke-key", "sami", keyID]).status, 1, "a revoked key is not found again")
        XCTAssertTrue(try activityEvents("sami").contains("operator.revoke_key"))
    }

    // MARK: activity

    func testActivityListsEveryOperatorActionNewestFirst() throws {
        _ = try register("tomas")
        XCTAssertEqual(try latchkey(["unlock", "tomas"]).status, 0)
        XCTAssertEqual(try latchkey(["deposit", "tomas", "checking", "100", "--idempotency-key", "tomas-1"]).status, 0)
        XCTAssertEqual(try latchkey(["revoke-session", "tomas", "--all"]).status, 0)

        let activity = try latchkey(["activity", "tomas", "--limit", "3", "--json"])
        XCTAssertEqual(activity.status, 0, activity.stderr)
        let events = try XCTUnwrap(try activity.json()["events"]?.arrayValue)
        XCTAssertEqual(events.map { $0["event"]?.stringValue }, ["operator.revoke_session", "operator.deposit", "operator.unlock"])
        XCTAssertEqual(events[1]["outcome"], "checking")
        let table = try latchkey(["activity", "tomas"])
        XCTAssertTrue(table.stdout.contains("EVENT") && table.stdout.contains("user.registered"), table.stdout)
    }

    // MARK: the edges

    func testOperatorMethodsAnswerNothingThroughTheGateway() throws {
        let userID = try register("uma")
        let gateway = try gateway()
        let methods: [(String, JSON)] = [
            ("identity.find_by_username", ["username": "uma"]),
            ("identity.operator_unlock", ["user_id": .string(userID)]),
            ("identity.operator_sessions", ["user_id": .string(userID)]),
            ("identity.operator_revoke_session", ["user_id": .string(userID), "all": true]),
            ("identity.operator_keys", ["user_id": .string(userID)]),
            ("identity.operator_revoke_key", ["user_id": .string(userID), "key_id": "key_x"]),
            ("identity.operator_activity", ["user_id": .string(userID)]),
            ("accounts.deposit", ["user_id": .string(userID), "account": "checking", "amount": 100, "idempotency_key": "x"]),
            ("identity.record", ["user_id": .string(userID), "event": "operator.deposit", "outcome": "checking"]),
        ]
        for (method, params) in methods {
            let answer = try gateway.call(method, params)
            guard case .failure(let error) = answer.outcome else { return XCTFail("\(method) answered through the gateway") }
            XCTAssertEqual(error.code, -32601, method)
            // Straight to the service, without the token, it is refused too.
            let service = String(method.prefix { $0 != "." })
            XCTAssertEqual(try direct(service).call(method, params).outcome.failureReason, "unauthenticated", method)
        }
        XCTAssertFalse(try activityEvents("uma").contains { $0.hasPrefix("operator.") }, "nothing happened")
    }

    func testUsageErrorsUnknownUsersAndAStoppedStackExitApart() throws {
        _ = try register("vera")
        let help = try latchkey(["deposit", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("usage: latchkey deposit USERNAME ACCOUNT AMOUNT_MINOR"), help.stdout)
        for command in ["unlock", "sessions", "revoke-session", "keys", "revoke-key", "activity"] {
            let run = try OperatorRun.start(["latchkey", command, "--help"], environment: toolEnvironment()).finish(timeoutSeconds: 30)
            XCTAssertEqual(run.status, 0, command)
            XCTAssertTrue(run.stdout.contains("usage: latchkey \(command)"), run.stdout)
        }
        XCTAssertEqual(try latchkey(["deposit", "vera", "checking"]).status, 2, "missing amount")
        XCTAssertEqual(try latchkey(["deposit", "vera", "checking", "12.50"]).status, 2, "amounts are integers in minor units")
        XCTAssertEqual(try latchkey(["revoke-session", "vera"]).status, 2, "a session id or --all")
        var strayAll = toolEnvironment()
        strayAll["LATCHKEY_ALL"] = "1"
        let stray = try OperatorRun.start(toolArguments(["revoke-session", "vera"]), environment: strayAll).finish(timeoutSeconds: 30)
        XCTAssertEqual(stray.status, 2, "--all comes from the command line only: \(stray.stdout)")
        XCTAssertEqual(try latchkey(["activity", "vera", "--limit", "0"]).status, 2)

        let unknown = try latchkey(["unlock", "nobody-here"])
        XCTAssertEqual(unknown.status, 1)
        XCTAssertTrue(unknown.stderr.contains("not_found"), unknown.stderr)

        let withoutToken = try OperatorRun.start(
            toolArguments(["sessions", "vera"]), environment: ProcessInfo.processInfo.environment.filter { $0.key != "LATCHKEY_SERVICE_TOKEN" }
        ).finish(timeoutSeconds: 30)
        XCTAssertEqual(withoutToken.status, 1)
        XCTAssertTrue(withoutToken.stderr.contains("LATCHKEY_SERVICE_TOKEN"), withoutToken.stderr)
        XCTAssertFalse(withoutToken.stderr.contains(Self.serviceToken))

        let nowhere = try Socket.listen(on: try XCTUnwrap(SocketAddress.resolve(host: "127.0.0.1", port: 0).first))
        let closedPort = try XCTUnwrap(nowhere.localAddress?.port)
        nowhere.close()
        let stopped = try OperatorRun.start(
            ["latchkey", "sessions", "vera", "--identity", "127.0.0.1:\(closedPort)"], environment: toolEnvironment()
        ).finish(timeoutSeconds: 30)
        XCTAssertEqual(stopped.status, 3, stopped.stderr)
        XCTAssertTrue(stopped.stderr.contains("is the stack running?"), stopped.stderr)
    }

    // MARK: helpers

    private func toolEnvironment() -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["LATCHKEY_SERVICE_TOKEN"] = Self.serviceToken
        return environment
    }

    private func toolArguments(_ arguments: [String]) -> [String] {
        ["latchkey"] + arguments + ["--identity", stack.replicaList("identity"), "--accounts", stack.replicaList("accounts")]
    }

    private func latchkey(_ arguments: [String]) throws -> OperatorRun.Result {
        try OperatorRun.start(toolArguments(arguments), environment: toolEnvironment()).finish(timeoutSeconds: 60)
    }

    @discardableResult
    private func register(_ username: String) throws -> String {
        try XCTUnwrap(try gateway().result("identity.register", [
            "username": .string(username), "password": .string(Self.password), "email": .string("\(username)@example.com"), "phone": "+15555550142",
        ])["user_id"]?.stringValue)
    }

    private func login(_ client: LineClient, _ username: String, device: String) throws -> JSON {
        try client.result("identity.login", ["username": .string(username), "password": .string(Self.password), "device_id": .string(device)])
    }

    /// A password session lifted to aal 2 the way verification does it after a code passed
    /// (`identity.elevate` on the identity port): the factors are not what these tests are about.
    private func steppedUpSession(_ username: String, device: String) throws -> JSON {
        let session = try XCTUnwrap(try login(gateway(), username, device: device)["session"])
        let identity = try direct("identity")
        let sessionID = try XCTUnwrap(try identity.internalResult("identity.introspect", ["session": session], token: Self.serviceToken)["session_id"])
        _ = try identity.internalResult("identity.elevate", ["session_id": sessionID, "factor": "sms"], token: Self.serviceToken)
        return session
    }

    private func keyLogin(_ username: String, device: DeviceKey) throws -> RPCResponse {
        let gateway = try gateway()
        let challenge = try XCTUnwrap(try gateway.result("identity.challenge", ["username": .string(username), "device_id": "sami-phone"])["challenge"])
        return try gateway.call("identity.key_login", [
            "username": .string(username), "device_id": "sami-phone", "challenge": challenge, "signature": device.sign(challenge),
        ])
    }

    private func activityEvents(_ username: String) throws -> [String] {
        let run = try latchkey(["activity", username, "--limit", "100", "--json"])
        XCTAssertEqual(run.status, 0, run.stderr)
        return try run.json()["events"]?.arrayValue?.compactMap { $0["event"]?.stringValue } ?? []
    }
}

/// A Secure Enclave stand-in: a P-256 key that signs challenges as iOS does.
private struct DeviceKey {
    let key = P256PrivateKey()
    var publicKey: JSON { .string(Data(key.publicKey.x963).base64EncodedString()) }

    func sign(_ challenge: JSON) -> JSON {
        .string(Data(key.signature(for: Base64URL.decode(challenge.stringValue ?? "") ?? [])).base64EncodedString())
    }
}

/// One run of the real `latchkey` binary, stdout and stderr captured apart in files.
final class OperatorRun {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String

        func json() throws -> JSON { try JSONParser.parse(stdout.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    let process = Process()
    let outputPath: String
    let errorPath: String

    private init(directory: String) {
        let name = UUID().uuidString.prefix(8)
        outputPath = "\(directory)/operator-\(name).out"
        errorPath = "\(directory)/operator-\(name).err"
    }

    /// `arguments[0]` names the executable next to the test binary.
    static func start(_ arguments: [String], environment: [String: String]) throws -> OperatorRun {
        let run = OperatorRun(directory: NSTemporaryDirectory())
        _ = FileManager.default.createFile(atPath: run.outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: run.errorPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: run.outputPath))
        let errors = try FileHandle(forWritingTo: URL(fileURLWithPath: run.errorPath))
        run.process.executableURL = URL(fileURLWithPath: executablePath(arguments[0]))
        run.process.arguments = Array(arguments.dropFirst())
        run.process.environment = environment
        run.process.standardOutput = output
        run.process.standardError = errors
        run.process.standardInput = FileHandle.nullDevice
        try run.process.run()
        try output.close()
        try errors.close()
        return run
    }

    /// Waits for the exit (killing the run past the deadline) and reads what it wrote.
    func finish(timeoutSeconds: Double) throws -> Result {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while process.isRunning {
            if Date() > deadline {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw MissingMessage(description: "latchkey \(process.arguments ?? []) did not exit within \(timeoutSeconds) s")
            }
            usleep(10_000)
        }
        process.waitUntilExit()
        defer {
            try? FileManager.default.removeItem(atPath: outputPath)
            try? FileManager.default.removeItem(atPath: errorPath)
        }
        return Result(
            status: process.terminationStatus, stdout: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "")
    }
}

extension LineClient {
    /// An internal call as a Latchkey service makes it: the service token in `meta`.
    fileprivate func internalResult(_ method: String, _ params: JSON, token: String) throws -> JSON {
        try send(RPCRequest(method: method, params: params, id: 1, meta: RequestMeta(token: token)).encoded())
        guard let line = try readLine(), let response = RPCResponse.decode(try JSONParser.parse(line)) else {
            throw MissingMessage(description: "no answer to \(method)")
        }
        return try response.outcome.get()
    }

    /// The error reason of a call's answer (nil for a result).
    fileprivate func reason(_ method: String, _ params: JSON) -> String? {
        (try? call(method, params))?.outcome.failureReason
    }
}

extension Result where Success == JSON, Failure == RPCError {
    fileprivate var failureReason: String? {
        if case .failure(let error) = self { return error.reasonText }
        return nil
    }
}
