import Foundation
import LineProtocol
import Platform
import RPC
import Secrets
import StackLauncher
@testable import Storage
import XCTest


/// A database of its own on the test server (`LATCHKEY_TEST_DATABASE_URL`, started by
/// `.ci/postgres.sh`), so the services' schemas (`verification`, `accounts`, ...) start empty
/// for every test; dropped afterwards, whoever is still connected.
final class PostgresTestDatabase {
    let serverURL: String
    let name = "e2e_" + UUID().uuidString.lowercased().filter(\.isLetter).prefix(12)

    init() throws {
        guard let url = ProcessInfo.processInfo.environment["LATCHKEY_TEST_DATABASE_URL"], !url.isEmpty else {
            throw XCTSkip("LATCHKEY_TEST_DATABASE_URL is not set (.ci/run starts a server and sets it)")
        }
        serverURL = url
        try Self.admin(url).execute("CREATE DATABASE \(name)")
    }

    /// The server's URL with this database instead of the server's own.
    var url: String {
        guard let slash = serverURL.range(of: "/", options: .backwards), serverURL[..<slash.lowerBound].contains("@") else {
            return serverURL
        }
        let query = serverURL[slash.upperBound...].firstIndex(of: "?").map { String(serverURL[$0...]) } ?? ""
        return serverURL[..<slash.upperBound] + name + query
    }

    func drop() {
        try? Self.admin(serverURL).execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    /// Runs one statement in this database: the first column of its first row as text ("" for none).
    @discardableResult
    func sql(_ statement: String) throws -> String {
        switch try Self.admin(url).query(statement, []).first?.values.first {
        case .integer(let number)?: return String(number)
        case .real(let number)?: return String(number)
        case .text(let text)?: return text
        case .blob(let bytes)?: return bytes.map { String(format: "%02x", $0) }.joined()
        case .null?, nil: return ""
        }
    }

    /// Rows of `sql` in this database (the test reads what the services stored).
    func query(_ sql: String, _ bindings: [SQLValue] = []) throws -> [Row] {
        try Self.admin(url).query(sql, bindings)
    }

    private static func admin(_ url: String) throws -> PostgresConnection {
        try PostgresConnection(url: url, applicationName: "latchkey-e2e", connectTimeoutSeconds: 5)
    }
}

/// Stops and starts the test server itself (its data directory, as the server reports it, and
/// Debian's `pg_ctl`, run as `postgres` when the tests run as root like CI does).
struct PostgresServerControl {
    let dataDirectory: String
    let startOptions: String
    private let pgctl: String

    init(url: String) throws {
        let admin = try PostgresConnection(url: url, applicationName: "latchkey-e2e", connectTimeoutSeconds: 5)
        dataDirectory = try XCTUnwrap(try admin.query("SHOW data_directory", []).first?.string("data_directory"))
        // What the server was started with (its first word is the server binary); `start` repeats it.
        let options = try String(contentsOfFile: dataDirectory + "/postmaster.opts", encoding: .utf8)
        let words = options.trimmingCharacters(in: .whitespacesAndNewlines)
        startOptions = String(words[(words.firstIndex(of: " ") ?? words.endIndex)...])
        let bin = try FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql").sorted().last.map { "/usr/lib/postgresql/\($0)/bin" }
        pgctl = try XCTUnwrap(bin) + "/pg_ctl"
    }

    func stop() throws { try run("\(pgctl) -D '\(dataDirectory)' -m fast -w stop") }

    func start() throws {
        let log = (dataDirectory as NSString).deletingLastPathComponent + "/server.log"
        try run("\(pgctl) -D '\(dataDirectory)' -l '\(log)' -w -o '\(startOptions.replacingOccurrences(of: "'", with: ""))' start")
    }

    var isRunning: Bool { FileManager.default.fileExists(atPath: dataDirectory + "/postmaster.pid") }

    /// Runs `command` with no descriptor of this process but /dev/null: the server `pg_ctl`
    /// starts lives on, and must not hold what Foundation's `Process` watches to see its
    /// children exit (it would make `waitUntilExit` wait for the server's end).
    private func run(_ command: String) throws {
        let asPostgres = getuid() == 0 ? "runuser -u postgres -- " : ""
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // glibc 2.34+; Swift's Glibc module does not import it, so look it up.
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            throw MissingMessage(description: "posix_spawn_file_actions_addclosefrom_np is missing (glibc 2.34+)")
        }
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        let arguments = ["/bin/sh", "-c", asPostgres + command]
        var pointers = arguments.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, &pointers, environ)
        guard spawned == 0 else { throw MissingMessage(description: "cannot run \(command): errno \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard status == 0 else { throw MissingMessage(description: "\(command) exited with status \(status)") }
    }
}

/// A stack whose services keep their data in a fresh PostgreSQL database, several replicas
/// each, as `latchkey up --postgres --replicas` runs them.
class PostgresStackTestCase: StackTestCase {
    var database: PostgresTestDatabase!

    /// Replicas per service for this class's stack.
    var replicas: [String: Int] { ["verification": 3, "accounts": 3, "gateway": 2] }

    override func setUpWithError() throws {
        database = try PostgresTestDatabase()
        try super.setUpWithError()
    }

    override func stackOptions(_ options: inout Stack.Options) {
        options.environment["LATCHKEY_DATABASE_URL"] = database.url
        // Replicas sharing the database share their service's key (codes, authenticator secrets,
        // address hashes).
        for variable in ["LATCHKEY_VERIFICATION_KEY", "LATCHKEY_IDENTITY_KEY", "LATCHKEY_RESET_KEY", "LATCHKEY_ACCOUNTS_KEY"] {
            options.environment[variable] = Hex.encode(SecureRandom.bytes(32))
        }
        options.replicas = replicas
        options.serviceEnvironment["gateway"] = ["LATCHKEY_RATE_LIMITS": "auth=0:1,codes=0:1,reset=0:1,default=0:1"]
    }

    override func tearDown() {
        super.tearDown()
        database?.drop()
    }

    /// Every replica of `service`.
    func replicaClients(_ service: String) throws -> [LineClient] {
        try (0..<(replicas[service] ?? 1)).map { try direct(service, replica: $0) }
    }

    /// Waits (bounded) until `condition` holds; false if it never did.
    func eventually(timeoutSeconds: Double = 20, _ condition: () throws -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while Date() < deadline {
            if (try? condition()) == true { return true }
            usleep(50_000)
        }
        return false
    }
}
