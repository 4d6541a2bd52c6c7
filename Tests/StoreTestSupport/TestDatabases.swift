import Foundation
import Storage
import XCTest

/// Which database a store test runs on. A test class may choose (`class var backend`, the
/// PostgreSQL twins of the verification and accounts suites); otherwise the whole process
/// follows `LATCHKEY_TEST_BACKEND` (`sqlite` or `postgres`: how `.ci/run` repeats the identity and
/// reset suites on PostgreSQL, since XCTest on Linux neither runs one test twice nor discovers
/// inherited tests).
public enum TestBackend: String, Sendable {
    case sqlite
    case postgres

    public static var processDefault: TestBackend {
        TestBackend(rawValue: ProcessInfo.processInfo.environment["LATCHKEY_TEST_BACKEND"] ?? "sqlite") ?? .sqlite
    }
}

/// The databases one test opens, by name: SQLite files in a directory, or PostgreSQL schemas of
/// their own on the server `LATCHKEY_TEST_DATABASE_URL` names (`.ci/postgres.sh` starts one).
/// Opening a name again reopens the same data (a restart). `removeAll` drops what it made.
public final class TestDatabases {
    public let backend: TestBackend
    public let directory: String
    private let ownsDirectory: Bool
    private let url: String?
    private let prefix = "t_" + String((0..<10).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement()! })
    private var schemas: Set<String> = []

    /// `directory`: where SQLite files go (a fresh temporary one, removed with the rest, when nil).
    public init(backend: TestBackend = .processDefault, directory: String? = nil) throws {
        self.backend = backend
        url = ProcessInfo.processInfo.environment["LATCHKEY_TEST_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
        if backend == .postgres && url == nil {
            throw XCTSkip("the PostgreSQL backend needs LATCHKEY_TEST_DATABASE_URL (.ci/run starts a server and sets it)")
        }
        ownsDirectory = directory == nil
        self.directory = directory ?? NSTemporaryDirectory() + "store-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: self.directory, withIntermediateDirectories: true)
    }

    /// `name`'s letters become part of a schema name on PostgreSQL.
    public func open(
        _ name: String, sqlite: [Migration], postgres: [Migration],
        sqliteOptions: DatabaseOptions = DatabaseOptions(synchronous: .full), postgresOptions: PostgresOptions = .init()
    ) throws -> any SQLDatabase {
        switch backend {
        case .sqlite:
            return try Database(path: "\(directory)/\(name).sqlite", options: sqliteOptions, migrations: sqlite)
        case .postgres:
            let schema = prefix + "_" + name.lowercased().filter { $0 >= "a" && $0 <= "z" }
            schemas.insert(schema)
            return try PostgresDatabase(url: url!, schema: schema, migrations: postgres, options: postgresOptions)
        }
    }

    /// Drops every schema this test made, and the directory when it made that too.
    public func removeAll() {
        if ownsDirectory { try? FileManager.default.removeItem(atPath: directory) }
        guard !schemas.isEmpty, let url, let admin = try? PostgresDatabase(url: url, schema: "public", migrations: []) else { return }
        for schema in schemas {
            _ = try? admin.write { c in try c.execute("DROP SCHEMA IF EXISTS \(schema) CASCADE") }
        }
        schemas.removeAll()
    }
}
