import Contract
import Delivery
import DeliveryTestSupport
import Foundation
import LineProtocol
import Platform
@testable import Reset
import RPC
import Runtime
import Secrets
import ServiceKit
import StoreTestSupport
import TestSupport
import XCTest


/// Identity's internal methods, in memory: users by e-mail, passwords, live sessions, audit events.
final class FakeIdentity: IdentityDirectory, @unchecked Sendable {
    struct User {
        var email: String
        var password: String
        var sessions: Int
    }

    private let lock = NSLock()
    private var users: [String: User] = [:]
    private(set) var calls: [String] = []
    private(set) var events: [String] = []
    /// Makes `check_password` slow, to line concurrent completes up.
    var checkDelayMicroseconds: UInt32 = 0
    /// Methods that answer `unavailable` (identity down).
    var failing: Set<String> = []

    func add(userID: String, email: String, password: String, sessions: Int = 2) {
        lock.lock()
        users[userID] = User(email: email, password: password, sessions: sessions)
        lock.unlock()
    }

    func user(_ userID: String) -> User? {
        lock.lock()
        defer { lock.unlock() }
        return users[userID]
    }

    func callCount(_ method: String) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return calls.filter { $0 == method }.count
    }

    /// Checks the call and the answer against the declarations, as the real directory does.
    func callAndWait(_ contract: MethodContract, _ params: [String: JSON], context: CallContext) throws(RPCError) -> JSON {
        let form = try contract.outgoingForm(params)
        return try contract.checkedAnswer(try answer(contract.name, params), of: form)
    }

    private func answer(_ method: String, _ params: [String: JSON]) throws(RPCError) -> JSON {
        lock.lock()
        calls.append(method)
        let fails = failing.contains(method)
        lock.unlock()
        if fails { throw RPCError(.unavailable, "identity is unavailable") }
        if method == "identity.check_password" && checkDelayMicroseconds > 0 { usleep(checkDelayMicroseconds) }
        lock.lock()
        defer { lock.unlock() }
        let userID = params["user_id"]?.stringValue ?? ""
        switch method {
        case "identity.find_by_email":
            let email = params["email"]?.stringValue ?? ""
            guard let (id, _) = users.first(where: { $0.value.email.lowercased() == email.lowercased() }) else { throw RPCError(.notFound, "no such user") }
            return ["user_id": .string(id)]
        case "identity.user":
            guard let user = users[userID] else { throw RPCError(.notFound, "no such user") }
            return ["user_id": .string(userID), "username": "someone", "email": .string(user.email), "phone": "+15555550100", "sms_verification": false, "phone_verified": false, "email_verified": false]
        case "identity.check_password", "identity.set_password":
            guard users[userID] != nil else { throw RPCError(.notFound, "no such user") }
            let password = params["password"]?.stringValue ?? ""
            if password.count < 12 {
                throw RPCError(.weakPassword, "password must have at least 12 characters", extra: ["rule": "too_short"])
            }
            if method == "identity.set_password" { users[userID]?.password = password }
            return ["ok": true]
        case "identity.revoke_all":
            let count = users[userID]?.sessions ?? 0
            users[userID]?.sessions = 0
            return ["revoked": .int(Int64(count))]
        case "identity.revoke_devices":
            guard users[userID] != nil else { throw RPCError(.notFound, "no such user") }
            return ["keys": 0, "device_tokens": 0, "removed_factors": []]
        case "identity.record":
            events.append("\(userID) \(params["event"]?.stringValue ?? "") \(params["outcome"]?.stringValue ?? "")")
            return ["ok": true]
        default:
            throw RPCError.methodNotFound(method)
        }
    }
}

func makePool(threads: Int, name: String) -> WorkerPool {
    WorkerPool(threadCount: threads, maxQueued: 100, name: name)
}

/// A reset service over a temporary SQLite file (or a PostgreSQL schema of its own when
/// LATCHKEY_TEST_BACKEND is `postgres`), a fake identity, a recording provider and a manual clock.
class ResetTestCase: XCTestCase {
    var directory: String!
    var databases: TestDatabases!
    var identity: FakeIdentity!
    var mail: RecordingProvider!
    var clock: ManualClock!
    var logs: LogSink!
    var store: SQLResetStore!
    var service: ResetService!
    var metrics: Metrics!

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "reset-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        identity = FakeIdentity()
        identity.add(userID: "u_alice", email: "alice@example.com", password: "old password 1234")
        mail = RecordingProvider()
        clock = ManualClock()
        logs = LogSink()
        databases = try TestDatabases(directory: directory)
        store = try openStore()
        try makeService(ResetSettings())
    }

    override func tearDownWithError() throws {
        store = nil
        service = nil
        databases?.removeAll()
        try? FileManager.default.removeItem(atPath: directory)
    }

    var backend: TestBackend { databases.backend }

    /// The reset database `name` on this run's backend (the same name reopens the same data).
    func openStore(_ name: String = "reset", migrations: Int? = nil) throws -> SQLResetStore {
        let sqlite = migrations.map { Array(ResetMigrations.sqlite.prefix($0)) } ?? ResetMigrations.sqlite
        let postgres = migrations.map { Array(ResetMigrations.postgres.prefix($0)) } ?? ResetMigrations.postgres
        return SQLResetStore(database: try databases.open(name, sqlite: sqlite, postgres: postgres, sqliteOptions: SQLResetStore.sqliteOptions))
    }

    func makeService(_ settings: ResetSettings, template: String = LinkTemplate.defaultTemplate) throws {
        metrics = Metrics()
        let clock = self.clock!
        service = ResetService(
            settings: settings, store: store, subjects: ResetSubject(key: Array(repeating: 7, count: 32)), identity: identity, mail: mail,
            composer: ResetMailComposer(linkTemplate: try LinkTemplate(template)),
            metrics: metrics, logger: Logger(service: "reset", minimumLevel: .debug, sink: logs),
            nowMilliseconds: { clock.nowMilliseconds() })
    }

    func context(client: String? = "198.51.100.7") -> CallContext {
        CallContext(
            method: "reset.request", requestID: "test-\(UUID().uuidString.prefix(8))", client: client,
            logger: Logger(service: "reset", minimumLevel: .debug, sink: logs), deadlineMilliseconds: MonotonicClock.nowMilliseconds() + 10_000)
    }

    /// A request, and its queued job run at once on this thread.
    func requestNow(_ email: String, client: String? = "198.51.100.7", file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNoThrow(try service.request(email: email, context: context(client: client)), file: file, line: line)
        runJobs()
    }

    /// The token in the newest reset mail (other mails, like "password changed", carry no link).
    func lastToken(file: StaticString = #filePath, line: UInt = #line) throws -> String {
        XCTAssertFalse(mail.sent.isEmpty, "no mail", file: file, line: line)
        let text = try XCTUnwrap(mail.sent.last(where: { $0.text.contains("token=") })?.text, "no link", file: file, line: line)
        let range = try XCTUnwrap(text.range(of: "token="), "no link", file: file, line: line)
        return String(text[range.upperBound...].prefix { $0 != "\n" && $0 != "&" })
    }

    /// Sends one request through the service's method table and waits for the answer.
    func dispatch(_ router: Router, _ method: String, _ params: JSON) -> Result<JSON, RPCError> {
        let box = ResultBox<Result<JSON, RPCError>>()
        router.dispatch(RPCRequest(method: method, params: params, id: 1), context: context()) { box.set($0) }
        return box.wait()
    }

    /// Runs every due job of the queue on this thread (the tests' stand-in for the mail workers).
    func runJobs() {
        while service.runNextJob() {}
    }
}

extension ResetService {
    /// `complete`, awaited on the calling thread: the tests call it from plain (and many) threads.
    func complete(token: String, password: String, context: CallContext) throws(ResetError) {
        do {
            try blocking { try await self.complete(token: token, password: password, context: context) }
        } catch let error as ResetError {
            throw error
        } catch {
            preconditionFailure("complete throws only ResetError")
        }
    }
}
