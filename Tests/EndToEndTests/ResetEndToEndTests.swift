import Foundation
import LineProtocol
import Platform
import RPC
import Runtime
import Secrets
import ServiceKit
import StackLauncher
import TestSupport
import XCTest

/// Runs the real `reset` executable against an in-process stand-in for identity's internal
/// methods (an `RPCServer` on port 0), in a temporary directory; stops both in `tearDown`.
class ResetProcessTestCase: XCTestCase {
    var identity: FakeIdentityServer!
    var reset: Process!
    var endpoint: Endpoint!
    var directory: String!

    var outboxPath: String { directory + "/outbox.jsonl" }
    var logPath: String { directory + "/reset.log" }

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "reset-e2e-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        identity = try FakeIdentityServer()
        identity.add(userID: "u_demo", email: "demo@example.com", password: "old password 1234", sessions: 3)
    }

    override func tearDown() {
        if let reset, reset.isRunning {
            kill(reset.processIdentifier, SIGTERM)
            // Bounded: a process that ignores SIGTERM fails the test instead of hanging the suite.
            let deadline = Date().addingTimeInterval(20)
            while reset.isRunning && Date() < deadline { usleep(10_000) }
            if reset.isRunning {
                XCTFail("reset did not stop within 20 s of SIGTERM")
                kill(reset.processIdentifier, SIGKILL)
                reset.waitUntilExit()
            }
        }
        identity?.stop()
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }

    func startReset(_ extra: [String: String] = [:]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath("reset"))
        process.arguments = ["--listen", "127.0.0.1:0"]
        var environment = ProcessInfo.processInfo.environment
        environment["LATCHKEY_DATA_DIR"] = directory
        environment["LATCHKEY_OUTBOX"] = outboxPath
        environment["LATCHKEY_IDENTITY"] = identity.endpoint.description
        environment["LATCHKEY_LOG_LEVEL"] = "debug"
        environment.merge(extra) { _, new in new }
        process.environment = environment
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        reset = process
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if let range = log.range(of: "\"net.listen\":\"") {
                let rest = log[range.upperBound...]
                if let end = rest.firstIndex(of: "\""), let bound = Endpoint(String(rest[..<end])) {
                    endpoint = bound
                    return
                }
            }
            guard process.isRunning else { throw ConfigurationError("reset exited: \(log)") }
            usleep(20_000)
        }
        throw ConfigurationError("reset did not listen")
    }

    func outbox() -> [JSON] {
        guard let text = try? String(contentsOfFile: outboxPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
    }

    func waitForMail(count: Int, file: StaticString = #filePath, line: UInt = #line) -> [JSON] {
        let deadline = Date().addingTimeInterval(10)
        while outbox().count < count && Date() < deadline { usleep(20_000) }
        XCTAssertEqual(outbox().count, count, "mails in the outbox", file: file, line: line)
        return outbox()
    }

    static func token(in text: String) -> String? {
        guard let range = text.range(of: "token=") else { return nil }
        return String(text[range.upperBound...].prefix { $0 != "\n" && $0 != "&" && $0 != "\"" })
    }

}

/// The reset executable over TCP: configuration, SQLite file, outbox, the identity client, and
/// the flow request -> mail -> validate -> complete.
final class ResetEndToEndTests: ResetProcessTestCase {
    func testTheWholeFlowOverTCP() throws {
        try startReset()
        let client = try LineClient(endpoint)
        XCTAssertEqual(try client.result("reset.request", ["email": "Demo@Example.com"]), ["ok": true])
        XCTAssertEqual(try client.result("reset.request", ["email": "nobody@example.com"]), ["ok": true])
        let mails = waitForMail(count: 1)
        let mail = try XCTUnwrap(mails.first)
        XCTAssertEqual(mail["channel"], "email")
        XCTAssertEqual(mail["to"], "demo@example.com")
        XCTAssertEqual(mail["subject"], "Reset your Latchkey password")
        let text = try XCTUnwrap(mail["text"]?.stringValue)
        XCTAssertTrue(text.contains("latchkey://reset-password?token=lkr_"))
        XCTAssertTrue(text.contains("expires in 30 minutes"))
        XCTAssertNotNil(mail["html"]?.stringValue)
        let token = try XCTUnwrap(Self.token(in: text))

        let valid = try client.result("reset.validate", ["token": .string(token)])
        XCTAssertEqual(valid["valid"], true)
        XCTAssertGreaterThan(valid["expires_at"]?.intValue ?? 0, Int64(Date().timeIntervalSince1970) + 1700)

        let weak = try client.call("reset.complete", ["token": .string(token), "password": "short"])
        guard case .failure(let weakError) = weak.outcome else { return XCTFail("weak password accepted") }
        XCTAssertEqual(weakError.reason, .weakPassword)
        XCTAssertEqual(weakError.data?["rule"], "too_short")

        XCTAssertEqual(try client.result("reset.complete", ["token": .string(token), "password": "a brand new password"]), ["ok": true])
        XCTAssertEqual(identity.user("u_demo")?.password, "a brand new password")
        XCTAssertEqual(identity.user("u_demo")?.sessions, 0)

        let reuses: [(String, JSON)] = [
            ("reset.validate", ["token": .string(token)]), ("reset.complete", ["token": .string(token), "password": "yet another password"]),
        ]
        for (method, params) in reuses {
            let again = try client.call(method, params)
            guard case .failure(let error) = again.outcome else { return XCTFail("\(method) accepted a used token") }
            XCTAssertEqual(error.reason, .invalidToken)
        }
        let changed = waitForMail(count: 2)[1]
        XCTAssertEqual(changed["subject"], "Your Latchkey password was changed")
        let deadline = Date().addingTimeInterval(5)
        while identity.events.isEmpty && Date() < deadline { usleep(20_000) }
        XCTAssertEqual(identity.events, ["u_demo password.reset success"])

        let log = try String(contentsOfFile: logPath, encoding: .utf8)
        XCTAssertFalse(log.contains(String(token.dropFirst(4))), "the token reached the log")
        XCTAssertFalse(log.contains("a brand new password"))
        XCTAssertTrue(log.contains("reset.token_ref"))
    }

    func testKnownAndUnknownAddressesAnswerAlikeEvenWhenIdentityIsSlow() throws {
        let lookups = Blocker()
        identity.findGate = lookups
        defer { lookups.release() }
        try startReset()
        let client = try LineClient(endpoint)
        _ = try client.result("reset.ping")
        for index in 0..<6 {
            for address in ["demo@example.com", "nobody\(index)@example.com"] {
                let answer = try client.call("reset.request", ["email": .string(address)])
                XCTAssertEqual(try answer.outcome.get(), ["ok": true])
                XCTAssertEqual(answer.encoded().count, RPCResponse(id: answer.id, result: ["ok": true]).encoded().count)
            }
        }
        // Every answer came while identity held the first lookup unanswered: none waits for it
        // (an answer that did would time out: the client gives up after 10 s, the gate after 60).
        XCTAssertTrue(lookups.waitUntilHeld(1), "the lookups happen after the answers, in the background")
        lookups.release()
        _ = waitForMail(count: 1)  // rate limits: one mail for the six requests within a minute
    }

    func testRateLimitedRequestsStillAnswerOkAndAreCounted() throws {
        try startReset(["LATCHKEY_RESET_CLIENT_PER_HOUR": "3"])
        let client = try LineClient(endpoint)
        for index in 0..<5 {
            XCTAssertEqual(try client.result("reset.request", ["email": .string("someone\(index)@example.com")]), ["ok": true])
        }
        let deadline = Date().addingTimeInterval(5)
        var refused: Int64 = 0
        while refused < 2 && Date() < deadline {
            refused = try client.result("reset.metrics")["counters"]?["reset.refused"]?.intValue ?? 0
            usleep(20_000)
        }
        XCTAssertEqual(refused, 2)
    }

    func testUniversalLinkTemplate() throws {
        try startReset(["LATCHKEY_RESET_LINK_TEMPLATE": "https://bank.example/reset?token={token}"])
        let client = try LineClient(endpoint)
        _ = try client.result("reset.request", ["email": "demo@example.com"])
        let text = try XCTUnwrap(waitForMail(count: 1).first?["text"]?.stringValue)
        XCTAssertTrue(text.contains("https://bank.example/reset?token=lkr_"), text)
    }

    func testSigtermFinishesMailsAlreadyPromised() throws {
        identity.findDelayMicroseconds = 300_000
        try startReset()
        let client = try LineClient(endpoint)
        XCTAssertEqual(try client.result("reset.request", ["email": "demo@example.com"]), ["ok": true])
        kill(reset.processIdentifier, SIGTERM)
        reset.waitUntilExit()
        XCTAssertEqual(reset.terminationStatus, 0)
        XCTAssertEqual(outbox().count, 1, "the answered request's mail went out before exit")
    }

    func testBadConfigurationStopsAtStart() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath("reset"))
        process.arguments = ["--listen", "127.0.0.1:0", "--data-dir", directory, "--reset-link-template", "https://no-placeholder.example/"]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 2)
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(text.contains("{token}"), text)
    }
}

/// identity's internal methods that reset calls, served over TCP from memory.
final class FakeIdentityServer: @unchecked Sendable {
    struct User {
        var email: String
        var password: String
        var sessions: Int
    }

    let loop: EventLoop
    let server: RPCServer
    let workers: WorkerPool
    let endpoint: Endpoint
    private let finished = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var users: [String: User] = [:]
    private var _events: [String] = []
    var findDelayMicroseconds: UInt32 = 0
    /// Holds every `find_by_email` until released, when set.
    var findGate: Blocker?

    init() throws {
        loop = try EventLoop()
        workers = WorkerPool(threadCount: 4, maxQueued: 64)
        let router = Router(workers: workers, metrics: Metrics())
        server = RPCServer(
            loop: loop, limits: ServerLimits(), dispatcher: router, logger: Logger(service: "identity", sink: LogSink()),
            replicaID: "identity", trustsCallerMeta: true)
        let address = try server.listen(on: Endpoint(host: "127.0.0.1", port: 0))
        endpoint = Endpoint(host: "127.0.0.1", port: address.port)
        register(router)
        let loop = self.loop
        let finished = self.finished
        Thread {
            loop.run()
            finished.signal()
        }.start()
    }

    func stop() {
        let server = self.server
        let loop = self.loop
        loop.execute { server.drain { loop.stop() } }
        finished.wait()
        workers.shutdownAndJoin()
    }

    func add(userID: String, email: String, password: String, sessions: Int) {
        locked { users[userID] = User(email: email, password: password, sessions: sessions) }
    }

    func user(_ userID: String) -> User? { locked { users[userID] } }
    var events: [String] { locked { _events } }

    private func locked<T>(_ body: () throws(RPCError) -> T) throws(RPCError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    private func register(_ router: Router) {
        router.register("identity.health", execution: .inline) { _, _ in ["status": "ok", "replica_id": "identity"] }
        router.register("identity.find_by_email") { [self] params, _ in
            if findDelayMicroseconds > 0 { usleep(findDelayMicroseconds) }
            findGate?.hold()
            let email = try params.string("email")
            return try locked { () throws(RPCError) -> JSON in
                guard let (id, _) = users.first(where: { $0.value.email == email }) else { throw RPCError(.notFound, "no such user") }
                return ["user_id": .string(id)]
            }
        }
        router.register("identity.user") { [self] params, _ in
            let userID = try params.string("user_id")
            return try locked { () throws(RPCError) -> JSON in
                guard let user = users[userID] else { throw RPCError(.notFound, "no such user") }
                return ["user_id": .string(userID), "username": "demo", "email": .string(user.email), "phone": "+15555550100", "sms_verification": false, "phone_verified": false, "email_verified": false]
            }
        }
        for method in ["identity.check_password", "identity.set_password"] {
            router.register(method) { [self] params, _ in
                let userID = try params.string("user_id")
                let password = try params.string("password")
                guard password.count >= 12 else {
                    throw RPCError(.weakPassword, "password must have at least 12 characters", extra: ["rule": "too_short"])
                }
                return try locked { () throws(RPCError) -> JSON in
                    guard users[userID] != nil else { throw RPCError(.notFound, "no such user") }
                    if method == "identity.set_password" { users[userID]?.password = password }
                    return ["ok": true]
                }
            }
        }
        router.register("identity.revoke_all") { [self] params, _ in
            let userID = try params.string("user_id")
            return locked {
                let count = users[userID]?.sessions ?? 0
                users[userID]?.sessions = 0
                return ["revoked": .int(Int64(count))]
            }
        }
        router.register("identity.revoke_devices") { _, _ in ["keys": 0, "device_tokens": 0, "removed_factors": []] }
        router.register("identity.record") { [self] params, _ in
            let line = "\(try params.string("user_id")) \(try params.string("event")) \(try params.string("outcome"))"
            locked { _events.append(line) }
            return ["ok": true]
        }
    }
}
