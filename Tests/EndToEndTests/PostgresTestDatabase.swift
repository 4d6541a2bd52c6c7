import Foundation
import XCTest

/// A database of its own on the test server (LATCHKEY_TEST_DATABASE_URL, started by
/// `.ci/postgres.sh`) for one end-to-end test, so services keep their usual schema names
/// (`identity`, `reset`, ...) without meeting another test's rows; dropped at the end. Uses
/// the server's own `psql`, as an operator would.
final class PostgresTestDatabase {
    let name = "e2e_" + String((0..<10).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement()! })
    /// The URL the services get: the test server's, naming this database.
    let url: String
    private let serverURL: String

    init() throws {
        guard let serverURL = ProcessInfo.processInfo.environment["LATCHKEY_TEST_DATABASE_URL"], !serverURL.isEmpty else {
            throw XCTSkip("LATCHKEY_TEST_DATABASE_URL is not set (.ci/run starts a server and sets it)")
        }
        self.serverURL = serverURL
        url = Self.url(serverURL, database: name)
        try Self.psql(serverURL, "CREATE DATABASE \(name)")
    }

    /// Runs one statement in this database and returns psql's unaligned output.
    @discardableResult
    func sql(_ statement: String) throws -> String { try Self.psql(url, statement) }

    func drop() {
        _ = try? Self.psql(serverURL, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    /// `postgres://user:pw@host:port/db?x` with `db` replaced.
    static func url(_ serverURL: String, database: String) -> String {
        let parts = serverURL.split(separator: "?", maxSplits: 1).map(String.init)
        let base = parts[0]
        guard let at = base.lastIndex(of: "@"), let slash = base[at...].firstIndex(of: "/") else { return serverURL }
        return String(base[..<slash]) + "/" + database + (parts.count > 1 ? "?" + parts[1] : "")
    }

    @discardableResult
    static func psql(_ url: String, _ statement: String) throws -> String {
        let binaries = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let version = binaries.sorted(by: { $0.compare($1, options: .numeric) == .orderedAscending }).last else {
            throw XCTSkip("no PostgreSQL client in /usr/lib/postgresql")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/lib/postgresql/\(version)/bin/psql")
        process.arguments = [url, "-v", "ON_ERROR_STOP=1", "-qtAc", statement]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0 else { throw PsqlError(description: "psql failed: \(text)") }
        return text
    }

    struct PsqlError: Error, CustomStringConvertible {
        let description: String
    }
}
