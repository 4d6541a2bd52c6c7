import Foundation
import LineProtocol
import RPC
import StackLauncher
import XCTest

/// Identity and reset as several replicas on one PostgreSQL database, with real processes: 3
/// identity replicas, 2 reset replicas and 2 gateways. Bursts are spread over every replica
/// and the work they buy is counted from the replicas' own metrics, never timed.
final class PostgresReplicaEndToEndTests: StackTestCase {
    private var database: PostgresTestDatabase?
    static let password = "correct horse battery"

    override func setUpWithError() throws {
        database = try PostgresTestDatabase()
        try super.setUpWithError()
    }

    override func stackOptions(_ options: inout Stack.Options) {
        options.environment["LATCHKEY_DATABASE_URL"] = database?.url
        // Costlier hashes keep guesses in flight together.
        options.environment["LATCHKEY_SCRYPT_LOG_N"] = "12"
        options.replicas = ["identity": 3, "reset": 2, "gateway": 2]
        options.serviceEnvironment["reset"] = ["LATCHKEY_RESET_KEY": PostgresStartEndToEndTests.resetKey]
        options.serviceEnvironment["identity"] = ["LATCHKEY_IDENTITY_KEY": PostgresStartEndToEndTests.identityKey]
        options.serviceEnvironment["verification"] = ["LATCHKEY_VERIFICATION_KEY": PostgresStartEndToEndTests.identityKey]
        options.serviceEnvironment["accounts"] = ["LATCHKEY_ACCOUNTS_KEY": PostgresStartEndToEndTests.accountsKey]
    }

    override func tearDown() {
        super.tearDown()
        database?.drop()
    }

    /// Sends every request on its connection first, then reads every answer: all in flight
    /// together. Returns the answers' reasons ("ok" for a result), counted.
    private func burst(_ requests: [(client: LineClient, method: String, params: JSON)]) throws -> [String: Int] {
        for (index, request) in requests.enumerated() {
            let line: JSON = ["jsonrpc": "2.0", "id": .int(Int64(index)), "method": .string(request.method), "params": request.params]
            try request.client.send(Array(line.text.utf8) + [0x0A])
        }
        var tally: [String: Int] = [:]
        for request in requests {
            let line = try XCTUnwrap(try request.client.readLine(), "every request is answered")
            let answer = try JSONParser.parse(String(decoding: line, as: UTF8.self))
            tally[answer["error"]?["data"]?["reason"]?.stringValue ?? "ok", default: 0] += 1
        }
        return tally
    }

    private func counter(_ service: String, _ name: String) throws -> Int64 {
        try (0..<(stack.options.replicas[service] ?? 1)).map { replica in
            try direct(service, replica: replica).result("\(service).metrics")["counters"]?[name]?.intValue ?? 0
        }.reduce(0, +)
    }

    func testThirtyParallelWrongPasswordsOverThreeIdentityReplicasAndTwoGatewaysRunAtMostTheFreeFailuresInHashes() throws {
        _ = try gateway().result("identity.register", [
            "username": "dora", "password": .string(Self.password), "email": "dora@example.com", "phone": "+15555550100",
        ])
        // Ten straight to each identity replica (so each surely gets some), and through each gateway.
        var clients = try (0..<3).map { try LineClient(stack.endpoint("identity", replica: $0), timeoutMilliseconds: 60_000) }
        clients += try (0..<2).map { try LineClient(stack.endpoint("gateway", replica: $0), timeoutMilliseconds: 60_000) }
        let requests = (0..<30).map { index in
            (client: clients[index % clients.count], method: "identity.login",
             params: ["username": "dora", "password": .string("wrong guess \(index)"), "device_id": "attacker"] as JSON)
        }
        let tally = try burst(requests)
        let free = 5
        XCTAssertEqual(tally["invalid_credentials"], free, "each invalid_credentials is one password check: \(tally)")
        XCTAssertEqual(tally.values.reduce(0, +), 30)
        XCTAssertEqual(Set(tally.keys).subtracting(["invalid_credentials", "locked", "rate_limited"]), [], "\(tally)")
        XCTAssertEqual(try counter("identity", "identity.password_checks"), Int64(free), "scrypt runs summed over the three replicas")
    }

    func testABurstOfResetRequestsForOneAddressOverBothReplicasIsAdmittedAndMailedOnce() throws {
        _ = try gateway().result("identity.register", [
            "username": "erin", "password": .string(Self.password), "email": "erin@example.com", "phone": "+15555550101",
        ])
        let clients = try (0..<2).map { try LineClient(stack.endpoint("reset", replica: $0)) }
        let tally = try burst((0..<20).map { index in
            (client: clients[index % 2], method: "reset.request", params: ["email": "Erin@Example.com"] as JSON)
        })
        XCTAssertEqual(tally, ["ok": 20], "the answer is the same whatever the limits decided")
        XCTAssertEqual(try counter("reset", "reset.requested"), 20)
        XCTAssertEqual(try counter("reset", "reset.refused"), 19, "one request a minute per address, across replicas")
        // Wait for the admitted request's job to leave the shared queue, then count the mails.
        let deadline = Date().addingTimeInterval(20)
        while try database!.sql("SELECT COUNT(*) FROM reset.reset_jobs") != "0" && Date() < deadline { usleep(50_000) }
        XCTAssertEqual(try database!.sql("SELECT COUNT(*) FROM reset.reset_jobs"), "0", "the job is done")
        let mails = outboxAfterRegistration().filter { $0["to"]?.stringValue == "erin@example.com" }
        XCTAssertEqual(mails.count, 1, "one mail for the one admitted request: \(mails)")
        XCTAssertEqual(try counter("reset", "reset.mail_sent"), 1)
    }
}

/// Starting a service on PostgreSQL it cannot use: one clear line on stderr, status 2.
final class PostgresStartEndToEndTests: XCTestCase {
    static let resetKey = String(repeating: "5a", count: 32)
    static let identityKey = String(repeating: "6b", count: 32)
    static let accountsKey = String(repeating: "7c", count: 32)
    private var database: PostgresTestDatabase?
    private var directory = ""

    override func setUpWithError() throws {
        database = try PostgresTestDatabase()
        directory = NSTemporaryDirectory() + "latchkey-pg-start-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        database?.drop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The lines of stderr that are not structured log lines: what a person reads.
    /// The process exits with status 2 and one line on stderr holding `text`.
    private func assertStopsWithOneLine(_ process: ChildProcess, saying text: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(process.waitForExit(timeoutSeconds: 20), 2, process.standardError, file: file, line: line)
        let lines = errorLines(process)
        XCTAssertEqual(lines.count, 1, "\(lines)", file: file, line: line)
        XCTAssertTrue(lines.first?.contains(text) ?? false, "\(lines)", file: file, line: line)
    }

    private func errorLines(_ process: ChildProcess) -> [String] {
        process.standardError.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("{") }
    }

    private func start(
        _ executable: String, url: String, resetKey: String? = PostgresStartEndToEndTests.resetKey,
        identityKey: String? = PostgresStartEndToEndTests.identityKey, accountsKey: String? = PostgresStartEndToEndTests.accountsKey
    ) throws -> ChildProcess {
        var environment = ["LATCHKEY_DATABASE_URL": url, "LATCHKEY_SCRYPT_LOG_N": "10"]
        if executable == "reset", let resetKey { environment["LATCHKEY_RESET_KEY"] = resetKey }
        if executable == "identity", let identityKey { environment["LATCHKEY_IDENTITY_KEY"] = identityKey }
        if executable == "accounts", let accountsKey { environment["LATCHKEY_ACCOUNTS_KEY"] = accountsKey }
        return try ChildProcess(
            directory: directory, executable: executable,
            arguments: ["--listen", "127.0.0.1:0", "--data-dir", directory + "/" + executable], environment: environment)
    }

    func testResetOnPostgreSQLWithoutASharedKeyStopsWithOneLine() throws {
        assertStopsWithOneLine(try start("reset", url: try XCTUnwrap(database).url, resetKey: nil), saying: "needs the same --reset-key")
    }

    /// Identity seals authenticator secrets under its key: replicas with a key file each could
    /// not open each other's secrets, so on PostgreSQL the key must be given and shared.
    func testIdentityOnPostgreSQLWithoutASharedKeyStopsWithOneLine() throws {
        assertStopsWithOneLine(try start("identity", url: try XCTUnwrap(database).url, identityKey: nil), saying: "needs the same --identity-key")
    }

    /// Accounts seals history cursors under its key: a replica with a key file of its own would
    /// refuse the cursors the others issued, so on PostgreSQL the key must be given and shared.
    func testAccountsOnPostgreSQLWithoutASharedKeyStopsWithOneLine() throws {
        assertStopsWithOneLine(try start("accounts", url: try XCTUnwrap(database).url, accountsKey: nil), saying: "needs the same --accounts-key")
    }

    func testASchemaNewerThanTheBinaryStopsIdentityAndResetWithOneLine() throws {
        let database = try XCTUnwrap(database)
        for service in ["identity", "reset"] {
            let first = try start(service, url: database.url)
            XCTAssertTrue(first.waitForLog("net.listen", timeoutSeconds: 20), first.standardError)
            first.terminate()
            XCTAssertEqual(first.waitForExit(timeoutSeconds: 20), 0)
            try database.sql("INSERT INTO \(service).schema_migrations (version, name, applied_at) VALUES (99, 'from a newer binary', 0)")

            let second = try start(service, url: database.url)
            XCTAssertEqual(second.waitForExit(timeoutSeconds: 20), 2, second.standardError)
            let lines = errorLines(second)
            XCTAssertEqual(lines.count, 1, "\(lines)")
            XCTAssertTrue(lines.first?.contains("schema version 99 is newer") ?? false, "\(lines)")
        }
    }

    func testAWrongPasswordInTheURLIsOneLineWithoutThePassword() throws {
        let database = try XCTUnwrap(database)
        let secret = "not-the-password-\(UUID().uuidString.prefix(6))"
        let url = database.url.replacingOccurrences(of: #"://([^:]+):[^@]*@"#, with: "://$1:\(secret)@", options: .regularExpression)
        XCTAssertTrue(url.contains(secret))
        for service in ["identity", "reset"] {
            let process = try start(service, url: url)
            XCTAssertEqual(process.waitForExit(timeoutSeconds: 20), 2, process.standardError)
            let lines = errorLines(process)
            XCTAssertEqual(lines.count, 1, "\(lines)")
            XCTAssertTrue(lines.first?.contains("password authentication failed") ?? false, "\(lines)")
            XCTAssertFalse(process.standardError.contains(secret), "the password never reaches the output")
            XCTAssertTrue(lines.first?.contains(":***@") ?? false, "the URL is named, without its password: \(lines)")
        }
    }
}
