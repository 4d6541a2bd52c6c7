import Foundation
import LineProtocol
import RPC
import StackLauncher
@testable import Storage
import TestSupport
import XCTest


/// Replicas on a real PostgreSQL server with real processes: identity, 3 verification and 3
/// accounts replicas sharing one database, 2 gateways. A transfer storm over every replica
/// survives `kill -9` of one accounts and one verification replica: each acknowledged transfer
/// is booked exactly once, the audit is clean and money is conserved.
final class PostgresTransferStormEndToEndTests: PostgresStackTestCase {
    override func stackOptions(_ options: inout Stack.Options) {
        super.stackOptions(&options)
        // One SMS per transfer to each user's phone: the send limits guard phones, not this test.
        var limits: [String: String] = [:]
        for name in ["PER_NUMBER_10M", "PER_NUMBER_DAY", "PER_USER_10M", "PER_USER_DAY", "PER_CLIENT_10M", "PER_CLIENT_DAY", "GLOBAL_HOUR", "GLOBAL_DAY"] {
            limits["LATCHKEY_VERIFICATION_SENDS_\(name)"] = "100000"
        }
        options.serviceEnvironment["verification"] = limits
    }

    private struct Acknowledged {
        let transferID: String
        let userID: String
    }

    private final class Ledger: @unchecked Sendable {
        private let lock = NSLock()
        private var acknowledged: [Acknowledged] = []
        private var refusals: [String] = []
        func add(_ item: Acknowledged) { locked { acknowledged.append(item) } }
        func refuse(_ reason: String) { locked { refusals.append(reason) } }
        var done: [Acknowledged] { locked { acknowledged } }
        var refused: [String] { locked { refusals } }
        private func locked<T>(_ body: () -> T) -> T {
            lock.lock()
            defer { lock.unlock() }
            return body()
        }
    }

    func testAStormOverEveryReplicaSurvivesKillNineOfAnAccountsAndAVerificationReplica() throws {
        let users = 6
        let rounds = 8
        let funding: Int64 = 1_000_000
        var sessions: [(session: String, userID: String)] = []
        let gateway = try gateway()
        for index in 0..<users {
            let username = "storm\(index)"
            let phone = "+1555556\(String(format: "%04d", index))"
            let password = "storm passphrase number \(index)"
            let registered = try gateway.result("identity.register", [
                "username": .string(username), "password": .string(password), "email": .string("\(username)@example.com"), "phone": .string(phone),
            ])
            let userID = try XCTUnwrap(registered["user_id"]?.stringValue)
            try provePhone(userID: userID, phone: phone)
            _ = try direct("accounts", replica: index % 3).result("accounts.deposit", [
                "user_id": .string(userID), "account": "checking", "amount": .int(funding), "idempotency_key": .string("fund-\(index)"),
            ])
            let login = try gateway.result("identity.login", ["username": .string(username), "password": .string(password), "device_id": "phone"])
            let session = try XCTUnwrap(login["session"]?.stringValue)
            try passSMSFactor(gateway, session: session)
            sessions.append((session, userID))
        }

        let gateways = [stack.endpoint("gateway", replica: 0), stack.endpoint("gateway", replica: 1)]
        let outboxPath = stack.outboxPath
        let ledger = Ledger()
        let finished = DispatchGroup()
        for (index, user) in sessions.enumerated() {
            finished.enter()
            Thread {
                defer { finished.leave() }
                for round in 0..<rounds {
                    // A fresh connection each round, to the gateways in turn: a broken one never stops the storm.
                    guard let client = try? LineClient(gateways[(index + round) % 2]) else {
                        ledger.refuse("connect")
                        continue
                    }
                    let (from, to) = round % 2 == 0 ? ("checking", "saving") : ("saving", "checking")
                    let answer = try? client.call("accounts.transfer", [
                        "session": .string(user.session), "from": .string(from), "to": .string(to), "amount": 100,
                        "idempotency_key": .string("storm-\(index)-\(round)"),
                    ]).outcome
                    let ticket = try? answer?.get()
                    guard let transferID = ticket?["transfer_id"]?.stringValue, let requestID = ticket?["request_id"]?.stringValue,
                        let code = try? StackTestCase.code(outboxPath: outboxPath, for: requestID)
                    else {
                        // What a kill -9 mid-request leaves: a reservation or a live code of the dead replica.
                        if case .failure(let error)? = answer { ledger.refuse("transfer: \(error.reasonText ?? "?")") } else { ledger.refuse("transfer") }
                        continue
                    }
                    switch (try? client.call("accounts.confirm", [
                        "session": .string(user.session), "transfer_id": .string(transferID), "code": .string(code),
                    ]))?.outcome {
                    case .success(let answer)? where answer["status"] == "done":
                        ledger.add(Acknowledged(transferID: transferID, userID: user.userID))
                    case .failure(let error)?: ledger.refuse(error.reasonText ?? "?")
                    default: ledger.refuse("no answer")
                    }
                }
            }.start()
        }
        // Mid-storm: one accounts replica and one verification replica die without a word.
        XCTAssertTrue(eventually { ledger.done.count >= users * rounds / 4 }, "the storm got going")
        stack.kill("accounts", replica: 1)
        stack.kill("verification", replica: 1)
        XCTAssertEqual(finished.wait(timeout: .now() + 120), .success)

        let acknowledged = ledger.done
        XCTAssertGreaterThan(acknowledged.count, users * rounds / 2, "most transfers went through: refused \(ledger.refused)")
        // Every acknowledged transfer is booked exactly once: one debit and one credit.
        for (session, userID) in sessions {
            let entries = try gateway.result("accounts.history", ["session": .string(session), "limit": 100])["entries"]?.arrayValue ?? []
            var legs: [String: Int] = [:]
            for entry in entries { legs[entry["transfer_id"]?.stringValue ?? "", default: 0] += 1 }
            for transfer in acknowledged where transfer.userID == userID {
                XCTAssertEqual(legs[transfer.transferID], 2, "transfer \(transfer.transferID) booked once")
            }
            XCTAssertTrue(legs.values.allSatisfy { $0 == 2 || $0 == 1 }, "no transfer booked twice: \(legs)")
            let balances = try gateway.result("accounts.balances", ["session": .string(session)])["accounts"]?.arrayValue ?? []
            XCTAssertEqual(balances.compactMap { $0["balance"]?.intValue }.reduce(0, +), funding, "money conserved for \(userID)")
        }
        for replica in [0, 2] {
            XCTAssertEqual(try direct("accounts", replica: replica).result("accounts.audit", [:]), ["ok": true, "breaches": []])
        }
    }
}

/// Send limits are one budget for every replica: starts for one number spread over three
/// verification processes at once send no more codes than the per-number limit allows.
final class PostgresSendLimitsEndToEndTests: PostgresStackTestCase {
    override var replicas: [String: Int] { ["verification": 3] }

    func testProofCodesToOneNumberThroughThreeReplicasRespectThePerNumberLimit() throws {
        let phone = "+15555557001"
        let identity = try direct("identity")
        var userIDs: [String] = []
        for index in 0..<9 {
            let registered = try identity.result("identity.register", [
                "username": .string("claimant\(index)"), "password": "claimant passphrase 42", "email": .string("claimant\(index)@example.com"),
                "phone": .string(phone),
            ])
            userIDs.append(try XCTUnwrap(registered["user_id"]?.stringValue))
        }
        let endpoints = (0..<3).map { stack.endpoint("verification", replica: $0) }
        let answers = SharedList<String>()
        let gate = DispatchSemaphore(value: 0)
        let finished = DispatchGroup()
        for (index, userID) in userIDs.enumerated() {
            finished.enter()
            Thread {
                defer { finished.leave() }
                let client = try? LineClient(endpoints[index % 3])
                gate.wait()
                switch (try? client?.call("verification.start", ["user_id": .string(userID), "purpose": "phone_proof", "channel": "sms"]))??.outcome {
                case .success(let result)?: answers.append("started \(result["request_id"]?.stringValue ?? "")")
                case .failure(let error)?: answers.append(error.reasonText ?? "?")
                case nil: answers.append("no answer")
                }
            }.start()
        }
        for _ in userIDs { gate.signal() }
        XCTAssertEqual(finished.wait(timeout: .now() + 30), .success)
        let started = answers.all.filter { $0.hasPrefix("started ") }
        // --verification-proof-sends-per-number-10m defaults to 2, for every replica together.
        XCTAssertEqual(started.count, 2, "\(answers.all)")
        XCTAssertEqual(answers.all.filter { $0 == "rate_limited" }.count, 7, "\(answers.all)")
        for answer in started {
            let requestID = String(answer.dropFirst("started ".count))
            XCTAssertFalse(requestID.dropFirst(3).contains("_"), "a shared request names no replica: \(requestID)")
            _ = try code(for: requestID)
        }
        XCTAssertEqual(outbox().filter { $0["to"]?.stringValue == phone }.count, 2)
    }
}

/// The database restarted under load: during the outage every replica answers `unavailable`
/// (no hang, no crash), and each recovers by itself once the server is back; deposits retried
/// with their idempotency keys are booked exactly once.
final class PostgresRestartEndToEndTests: PostgresStackTestCase {
    override var replicas: [String: Int] { ["verification": 2, "accounts": 2] }
    private var server: PostgresServerControl?

    override func tearDown() {
        // Never leave the shared test server down for the suites that follow.
        if let server, !server.isRunning { try? server.start() }
        super.tearDown()
    }

    private final class Deposits: @unchecked Sendable {
        private let lock = NSLock()
        private var acknowledged: Set<String> = []
        private var attempted: [String] = []
        private(set) var stopped = false
        func attempt(_ key: String) { locked { attempted.append(key) } }
        func acknowledge(_ key: String) { _ = locked { acknowledged.insert(key) } }
        func stop() { locked { stopped = true } }
        var isStopped: Bool { locked { stopped } }
        var acknowledgedCount: Int { locked { acknowledged.count } }
        var unacknowledged: [String] { locked { attempted.filter { !acknowledged.contains($0) } } }
        var attemptedCount: Int { locked { attempted.count } }
        private func locked<T>(_ body: () -> T) -> T {
            lock.lock()
            defer { lock.unlock() }
            return body()
        }
    }

    private static func deposit(_ client: LineClient, key: String) -> Result<JSON, RPCError>? {
        try? client.call("accounts.deposit", ["user_id": "load", "account": "checking", "amount": 1, "idempotency_key": .string(key)]).outcome
    }

    func testServicesAnswerUnavailableWhileTheDatabaseIsDownAndRecoverByThemselves() throws {
        let server = try PostgresServerControl(url: database.serverURL)
        self.server = server
        let endpoints = (0..<2).map { stack.endpoint("accounts", replica: $0) }
        let deposits = Deposits()
        let loadDone = DispatchSemaphore(value: 0)
        Thread {
            // A client that retries a deposit with its key until it is answered, as clients should.
            var round = 0
            deposits.attempt("load-0")
            while !deposits.isStopped {
                let key = "load-\(round)"
                if let client = try? LineClient(endpoints[round % 2]), case .success? = Self.deposit(client, key: key) {
                    deposits.acknowledge(key)
                    round += 1
                    deposits.attempt("load-\(round)")
                } else {
                    usleep(20_000)  // the client's back-off, not synchronisation
                }
            }
            loadDone.signal()
        }.start()
        XCTAssertTrue(eventually { deposits.acknowledgedCount >= 20 }, "the load got going")

        try server.stop()
        // Every replica answers, and answers `unavailable` (the client's 10 s read timeout bounds a hang).
        for client in try replicaClients("accounts") {
            assertError(try client.call("accounts.audit", [:]), "unavailable")
            assertError(try client.call("accounts.deposit", ["user_id": "x", "account": "checking", "amount": 1, "idempotency_key": "outage"]), "unavailable")
        }
        for client in try replicaClients("verification") {
            assertError(try client.call("verification.start", ["number": "+15555557101", "purpose": "transaction"]), "unavailable")
        }

        try server.start()
        for (index, client) in try replicaClients("accounts").enumerated() {
            XCTAssertTrue(eventually { (try? client.result("accounts.audit", [:]))?["ok"] == true }, "accounts replica \(index) recovered")
        }
        for (index, client) in try replicaClients("verification").enumerated() {
            XCTAssertTrue(eventually {
                (try? client.result("verification.start", ["number": .string("+1555555\(7200 + index)"), "purpose": "transaction"])) != nil
            }, "verification replica \(index) recovered")
        }
        let afterRecovery = deposits.acknowledgedCount
        XCTAssertTrue(eventually { deposits.acknowledgedCount >= afterRecovery + 20 }, "the load goes on")
        deposits.stop()
        XCTAssertEqual(loadDone.wait(timeout: .now() + 30), .success)

        // A deposit whose answer was lost may have been booked: its key books it at most once.
        let client = try direct("accounts")
        for key in deposits.unacknowledged {
            XCTAssertTrue(eventually { if case .success? = Self.deposit(client, key: key) { return true } else { return false } }, key)
        }
        let balance = try XCTUnwrap(try database.query(
            "SELECT balance FROM accounts.accounts WHERE user_id = 'load' AND name = 'checking'").first?.int("balance"))
        XCTAssertEqual(balance, Int64(deposits.attemptedCount), "each deposit booked exactly once")
        XCTAssertEqual(try client.result("accounts.audit", [:]), ["ok": true, "breaches": []])
        for service in ["accounts", "verification"] {
            for replica in 0..<2 { XCTAssertTrue(stack.member(service, replica: replica).process.isRunning, "\(service) \(replica) never crashed") }
        }
    }
}

/// Replicas sharing a database must share the key codes are derived under: a verification
/// process on PostgreSQL without `--verification-key` stops at start, saying so (and never
/// printing the database password), instead of sending codes the other replicas refuse.
final class PostgresVerificationKeyEndToEndTests: XCTestCase {
    func testVerificationOnPostgresWithoutASharedKeyStopsWithOneClearLine() throws {
        let database = try PostgresTestDatabase()
        defer { database.drop() }
        let directory = NSTemporaryDirectory() + "latchkey-pgkey-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LATCHKEY_") }
        environment["LATCHKEY_DATA_DIR"] = directory
        environment["LATCHKEY_IDENTITY"] = "127.0.0.1:1"
        environment["LATCHKEY_DATABASE_URL"] = database.url
        let run = try ChildProcess(directory: directory, executable: "verification", arguments: ["--listen", "127.0.0.1:0"], environment: environment)
        XCTAssertEqual(run.waitForExit(timeoutSeconds: 20), 2, run.standardError)
        XCTAssertTrue(run.standardError.contains("--verification-key"), run.standardError)
        let password = URLComponents(string: database.url)?.password ?? "no password in the URL"
        XCTAssertFalse(run.standardError.contains(password), "the password stays out of the error")
    }
}
