import Foundation
import Storage
import XCTest

/// The database a test class runs its service on. Every store suite runs on SQLite, and a
/// second time on PostgreSQL when `LATCHKEY_TEST_DATABASE_URL` names a server (`.ci/run` starts one).
enum TestBackend {
    case sqlite, postgres
}

/// Fresh databases for one test: SQLite files in a temporary directory, or PostgreSQL schemas
/// of their own; all removed by `removeAll`. Opening the same name again reopens the same data.
final class TestDatabases {
    let backend: TestBackend
    private let directory: String
    private let url: String?
    private let prefix = "t_" + UUID().uuidString.lowercased().filter(\.isLetter).prefix(10)
    private var schemas: Set<String> = []

    init(backend: TestBackend) throws {
        self.backend = backend
        url = ProcessInfo.processInfo.environment["LATCHKEY_TEST_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
        if backend == .postgres && url == nil {
            throw XCTSkip("LATCHKEY_TEST_DATABASE_URL is not set (.ci/run starts a server and sets it)")
        }
        directory = NSTemporaryDirectory() + "store-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// `name` is lower-case letters (it becomes part of a schema name).
    func open(_ name: String, sqlite: [Migration], postgres: [Migration], postgresOptions: PostgresOptions = .init()) throws -> any SQLDatabase {
        switch backend {
        case .sqlite:
            return try Database(path: "\(directory)/\(name).sqlite", options: DatabaseOptions(synchronous: .full), migrations: sqlite)
        case .postgres:
            let schema = "\(prefix)_\(name)"
            schemas.insert(schema)
            return try PostgresDatabase(url: url!, schema: schema, migrations: postgres, options: postgresOptions)
        }
    }

    func removeAll() {
        try? FileManager.default.removeItem(atPath: directory)
        guard !schemas.isEmpty, let url, let admin = try? PostgresDatabase(url: url, schema: "public", migrations: []) else { return }
        for schema in schemas {
            _ = try? admin.write { c in try c.execute("DROP SCHEMA IF EXISTS \(schema) CASCADE") }
        }
        schemas.removeAll()
    }
}
