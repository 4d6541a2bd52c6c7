import Foundation
import Storage
import XCTest

/// The databases one test opens, by name: SQLite files in the test's directory, or, when
/// LATCHKEY_TEST_BACKEND is `postgres`, schemas of their own on the server
/// LATCHKEY_TEST_DATABASE_URL names (`.ci/postgres.sh` starts one), dropped when the test ends.
/// The same name opens the same data again (a restart). XCTest on Linux can neither run one
/// test twice nor discover inherited tests, so the backend is chosen per test process.
final class TestDatabases {
    enum Backend: String {
        case sqlite
        case postgres
    }

    let backend: Backend
    let directory: String
    private let postgresURL: String?
    private let prefix = "t_" + String((0..<10).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement()! })
    private var schemas: Set<String> = []

    init(directory: String) throws {
        let environment = ProcessInfo.processInfo.environment
        self.directory = directory
        switch environment["LATCHKEY_TEST_BACKEND"] ?? "sqlite" {
        case "sqlite":
            backend = .sqlite
            postgresURL = nil
        case "postgres":
            guard let url = environment["LATCHKEY_TEST_DATABASE_URL"], !url.isEmpty else {
                throw XCTSkip("LATCHKEY_TEST_BACKEND=postgres needs LATCHKEY_TEST_DATABASE_URL (.ci/postgres.sh starts a server)")
            }
            backend = .postgres
            postgresURL = url
        case let other:
            throw StorageError.misuse("LATCHKEY_TEST_BACKEND must be sqlite or postgres, not \(other)")
        }
    }

    func open(_ name: String, sqlite: [Migration], postgres: [Migration], sqliteOptions: DatabaseOptions = .init()) throws -> any SQLDatabase {
        guard let postgresURL else {
            return try Database(path: directory + "/" + name + ".sqlite", options: sqliteOptions, migrations: sqlite)
        }
        let schema = prefix + "_" + name.lowercased().filter { $0 >= "a" && $0 <= "z" }
        schemas.insert(schema)
        return try PostgresDatabase(url: postgresURL, schema: schema, migrations: postgres)
    }

    /// Drops every schema this test created.
    func dropAll() throws {
        guard let postgresURL, !schemas.isEmpty else { return }
        let admin = try PostgresDatabase(url: postgresURL, schema: "public", migrations: [])
        try admin.write { c in
            for schema in schemas { try c.execute("DROP SCHEMA IF EXISTS \(schema) CASCADE") }
        }
        schemas.removeAll()
    }
}
