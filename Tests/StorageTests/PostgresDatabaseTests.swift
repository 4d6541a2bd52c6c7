import Foundation
import TestSupport
import XCTest

@testable import Storage

/// The PostgreSQL backend against a real server: `.ci/postgres.sh` starts a throwaway cluster
/// (and PgBouncer in transaction pooling mode) and exports its URLs. Each test gets its own
/// schema, dropped afterwards.
final class PostgresDatabaseTests: XCTestCase {
    private var url = ""
    private var schema = ""

    static let itemsMigration = Migration(version: 1, name: "items", sql: """
        CREATE TABLE items (id BIGSERIAL PRIMARY KEY, name TEXT NOT NULL UNIQUE, qty BIGINT NOT NULL DEFAULT 0,
            price DOUBLE PRECISION, data BYTEA, flag BIGINT)
        """)

    override func setUpWithError() throws {
        guard let url = ProcessInfo.processInfo.environment["LATCHKEY_TEST_DATABASE_URL"] else {
            throw XCTSkip("LATCHKEY_TEST_DATABASE_URL is not set (.ci/run starts a server and sets it)")
        }
        self.url = url
        schema = "t_" + UUID().uuidString.prefix(8).lowercased().filter(\.isLetter)
    }

    override func tearDownWithError() throws {
        guard !url.isEmpty else { return }
        let admin = try PostgresDatabase(url: url, schema: "public", migrations: [])
        try admin.write { c in try c.execute("DROP SCHEMA IF EXISTS \(schema) CASCADE") }
    }

    private func open(_ migrations: [Migration] = [PostgresDatabaseTests.itemsMigration], url: String? = nil, options: PostgresOptions = .init()) throws -> PostgresDatabase {
        try PostgresDatabase(url: url ?? self.url, schema: schema, migrations: migrations, options: options)
    }

    func testEveryValueKindRoundTripsThroughBoundParameters() throws {
        let db = try open()
        let blob = [UInt8](repeating: 0xAB, count: 70_000) + [0, 1, 255]
        try db.write { c in
            try c.run("INSERT INTO items (name, qty, price, data, flag) VALUES (?, ?, ?, ?, ?)",
                      [.text("it's a \"quoted\" ? name"), .integer(Int64.max), .real(2.5), .blob(blob), SQLValue(true)])
            try c.run("INSERT INTO items (name, qty, price, data, flag) VALUES (?, ?, ?, ?, ?)", [.text("empty"), .integer(-7), .null, .blob([]), SQLValue(false)])
        }
        let rows = try db.read { c in try c.query("SELECT name, qty, price, data, flag FROM items ORDER BY id") }
        XCTAssertEqual(try rows[0].string("name"), "it's a \"quoted\" ? name")
        XCTAssertEqual(try rows[0].int("qty"), Int64.max)
        XCTAssertEqual(try rows[0].double("price"), 2.5)
        XCTAssertEqual(try rows[0].blob("data"), blob)
        XCTAssertEqual(try rows[0].bool("flag"), true)
        XCTAssertEqual(try rows[1].int("qty"), -7)
        XCTAssertEqual(rows[1]["price"], .null)
        XCTAssertEqual(try rows[1].blob("data"), [])
        XCTAssertEqual(try rows[1].bool("flag"), false)
        // Booleans the server computes read as SQLite stores them: 0 or 1.
        XCTAssertEqual(try db.read { c in try c.queryOne("SELECT qty > 0 AS positive FROM items WHERE name = 'empty'")!.bool("positive") }, false)
    }

    func testPlaceholdersInsideLiteralsAndCommentsAreNotParameters() {
        XCTAssertEqual(PostgresPlaceholders.rewrite("SELECT '?' AS a, \"?\" , ? -- why?\n, ?").text, "SELECT '?' AS a, \"?\" , $1 -- why?\n, $2")
        XCTAssertEqual(PostgresPlaceholders.rewrite("UPDATE t SET a = ? WHERE b = ? AND c = 'x'").count, 2)
    }

    func testTenReplicasStartingTogetherMigrateOnce() throws {
        let migrations = [Self.itemsMigration, Migration(version: 2, name: "more", sql: "ALTER TABLE items ADD COLUMN note TEXT")]
        let errors = SharedList<String>()
        let (url, schema) = (self.url, self.schema)
        DispatchQueue.concurrentPerform(iterations: 10) { _ in
            do { _ = try PostgresDatabase(url: url, schema: schema, migrations: migrations) } catch { errors.append("\(error)") }
        }
        XCTAssertEqual(errors.all, [])
        let db = try open(migrations)
        XCTAssertEqual(try db.schemaVersion(), 2)
        XCTAssertEqual(try db.read { c in try c.queryOne("SELECT COUNT(*) AS n FROM schema_migrations")!.int("n") }, 2)
    }

    func testASchemaNewerThanTheBinaryRefusesToStart() throws {
        _ = try open([Self.itemsMigration, Migration(version: 2, name: "future", sql: "CREATE TABLE future (x INT)")])
        XCTAssertThrowsError(try open([Self.itemsMigration])) { error in
            XCTAssertEqual(error as? StorageError, .schemaTooNew(found: 2, known: 1))
        }
    }

    func testParallelReadThenWriteLosesNoUpdate() throws {
        try assertNoLostUpdates(url: url)
    }

    func testParallelReadThenWriteLosesNoUpdateThroughPgBouncer() throws {
        guard let bouncer = ProcessInfo.processInfo.environment["LATCHKEY_TEST_PGBOUNCER_URL"] else {
            throw XCTSkip("LATCHKEY_TEST_PGBOUNCER_URL is not set")
        }
        try assertNoLostUpdates(url: bouncer)
    }

    /// 40 transactions on 8 connections each read a counter and write it back plus one: under
    /// READ COMMITTED some increments would be lost; SERIALIZABLE with retries keeps all 40.
    private func assertNoLostUpdates(url: String) throws {
        var options = PostgresOptions()
        options.poolSize = 8
        let db = try open(url: url, options: options)
        try db.write { c in try c.run("INSERT INTO items (name, qty) VALUES ('counter', 0)") }
        let errors = SharedList<String>()
        DispatchQueue.concurrentPerform(iterations: 40) { _ in
            do {
                try db.write { c in
                    let current = try c.queryOne("SELECT qty FROM items WHERE name = 'counter'")!.int("qty")
                    try c.run("UPDATE items SET qty = ? WHERE name = 'counter'", [.integer(current + 1)])
                }
            } catch {
                errors.append("\(error)")
            }
        }
        XCTAssertEqual(errors.all, [])
        XCTAssertEqual(try db.read { c in try c.queryOne("SELECT qty FROM items WHERE name = 'counter'")!.int("qty") }, 40)
    }

    func testAUniqueViolationIsADomainErrorAndRollsBackTheWholeTransaction() throws {
        let db = try open()
        try db.write { c in try c.run("INSERT INTO items (name) VALUES ('a')") }
        XCTAssertThrowsError(try db.write { c in
            try c.run("INSERT INTO items (name) VALUES ('b')")
            try c.run("INSERT INTO items (name) VALUES ('a')")
        }) { error in
            guard case .constraintUnique(let what)? = error as? StorageError else { return XCTFail("\(error)") }
            XCTAssertTrue(what.contains("items"), what)
        }
        XCTAssertEqual(try db.read { c in try c.queryOne("SELECT COUNT(*) AS n FROM items")!.int("n") }, 1)
    }

    func testAReadTransactionRefusesWrites() throws {
        let db = try open()
        XCTAssertThrowsError(try db.read { c in try c.run("INSERT INTO items (name) VALUES ('x')") }) { error in
            XCTAssertEqual(error as? StorageError, .readOnly)
        }
    }

    func testAStatementPastTheTimeoutAnswersBusy() throws {
        var options = PostgresOptions()
        options.statementTimeoutMilliseconds = 100
        let db = try open(options: options)
        XCTAssertThrowsError(try db.read { c in try c.query("SELECT pg_sleep(5)") }) { error in
            XCTAssertEqual(error as? StorageError, .busy)
        }
        XCTAssertEqual(try db.read { c in try c.queryOne("SELECT 1 AS one")!.int("one") }, 1, "the connection is usable afterwards")
    }

    func testAWrongPasswordIsOneClearErrorWithoutThePassword() throws {
        guard var components = URLComponents(string: url) else { return XCTFail("unparsable test URL") }
        components.password = "definitely-not-the-password"
        XCTAssertThrowsError(try open(url: components.string!)) { error in
            guard case .unavailable(let message)? = error as? StorageError else { return XCTFail("\(error)") }
            XCTAssertFalse(message.contains("definitely-not-the-password"), message)
            XCTAssertTrue(message.contains("***"), message)
        }
    }

    func testAnUnreachableServerFailsFastDuringTheBackOff() throws {
        let db = try open()
        // Point a second database at a port nobody listens on: the first call tries and fails,
        // the next ones within the back-off fail at once without trying.
        var options = PostgresOptions()
        options.initialBackoffMilliseconds = 60_000
        let refused = "postgres://latchkey:x@127.0.0.1:1/latchkey"
        XCTAssertThrowsError(try PostgresDatabase(url: refused, schema: schema, migrations: [], options: options))
        let attempts = Counter()
        let counting = PostgresPool(size: 2, options: options) { () throws(StorageError) in
            attempts.add()
            return try PostgresConnection(url: refused, applicationName: "test", connectTimeoutSeconds: 1)
        }
        for _ in 0..<5 { XCTAssertThrowsError(try counting.checkOut()) }
        XCTAssertEqual(attempts.value, 1, "one connect attempt, then fast failures during the back-off")
        XCTAssertEqual(try db.read { c in try c.queryOne("SELECT 1 AS one")!.int("one") }, 1)
    }
}
