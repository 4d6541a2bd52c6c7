import Foundation
import XCTest

@testable import Storage

final class OpenAndMigrationTests: StorageTestCase {
    func testOpenCreatesTheFileInWALModeWithFullSynchronousAndForeignKeys() throws {
        let db = try open()
        XCTAssertTrue(FileManager.default.fileExists(atPath: path()))
        try db.withWriter { c in
            XCTAssertEqual(try c.queryOne("PRAGMA journal_mode")?["journal_mode"], .text("wal"))
            XCTAssertEqual(try c.queryOne("PRAGMA synchronous")?["synchronous"], .integer(2))  // FULL
            XCTAssertEqual(try c.queryOne("PRAGMA foreign_keys")?["foreign_keys"], .integer(1))
            XCTAssertEqual(try c.queryOne("PRAGMA busy_timeout")?["timeout"], .integer(5000))
        }
        try db.read { c in
            XCTAssertEqual(try c.queryOne("PRAGMA journal_mode")?["journal_mode"], .text("wal"))
            XCTAssertEqual(try c.queryOne("PRAGMA foreign_keys")?["foreign_keys"], .integer(1))
        }
    }

    func testNormalSynchronousOptionIsApplied() throws {
        let db = try open(options: DatabaseOptions(busyTimeoutMilliseconds: 1234, synchronous: .normal))
        try db.withWriter { c in
            XCTAssertEqual(try c.queryOne("PRAGMA synchronous")?["synchronous"], .integer(1))  // NORMAL
            XCTAssertEqual(try c.queryOne("PRAGMA busy_timeout")?["timeout"], .integer(1234))
        }
    }

    func testMigrationsApplyOnceAreRecordedAndSkippedOnReopen() throws {
        let migrations = [
            StorageTestCase.itemsMigration,
            // Not idempotent: applied twice it would fail on the unique name or leave two rows.
            Migration(version: 2, name: "seed", sql: "INSERT INTO items (name, qty) VALUES ('seed', 1);"),
        ]
        do {
            let db = try open(migrations: migrations)
            XCTAssertEqual(try count(db), 1)
            XCTAssertEqual(try db.schemaVersion(), 2)
            let recorded = try db.read { c in try c.query("SELECT version, name, applied_at FROM schema_migrations ORDER BY version") }
            XCTAssertEqual(try recorded.map { try $0.int("version") }, [1, 2])
            XCTAssertEqual(try recorded.map { try $0.string("name") }, ["items", "seed"])
            let now = Int64(Date().timeIntervalSince1970)
            for row in recorded { XCTAssertLessThanOrEqual(abs(try row.int("applied_at") - now), 60) }
        }
        // Reopen with the same list: nothing re-applied. Then with one more: only the new one runs.
        do {
            let db = try open(migrations: migrations)
            XCTAssertEqual(try count(db), 1)
        }
        let more = migrations + [Migration(version: 3, name: "more", sql: "INSERT INTO items (name) VALUES ('third');")]
        let db = try open(migrations: more)
        XCTAssertEqual(try count(db), 2)
        XCTAssertEqual(try db.schemaVersion(), 3)
    }

    func testSchemaNewerThanTheCodeIsRefused() throws {
        let v2 = [StorageTestCase.itemsMigration, Migration(version: 2, name: "two", sql: "CREATE TABLE two (id INTEGER PRIMARY KEY)")]
        _ = try open(migrations: v2)
        assertStorageError(.schemaTooNew(found: 2, known: 1)) { try open(migrations: [StorageTestCase.itemsMigration]) }
        assertStorageError(.schemaTooNew(found: 2, known: 0)) { try open(migrations: []) }
        // Refusing did not damage anything: the current binary still opens it.
        XCTAssertEqual(try open(migrations: v2).schemaVersion(), 2)
    }

    func testAFailingMigrationIsRolledBackWholeAndNotRecorded() throws {
        _ = try open()
        let broken = Migration(
            version: 2, name: "broken",
            sql: "CREATE TABLE half (id INTEGER PRIMARY KEY); INSERT INTO no_such_table VALUES (1);")
        let error = assertStorageError(.misuse("no such table: no_such_table (SQL logic error, code 1)")) {
            try open(migrations: [StorageTestCase.itemsMigration, broken])
        }
        XCTAssertNotNil(error)
        let db = try open()
        XCTAssertEqual(try db.schemaVersion(), 1)
        let half = try db.read { c in try c.queryOne("SELECT name FROM sqlite_master WHERE name = 'half'") }
        XCTAssertNil(half, "the first statement of the failed migration must be rolled back too")
    }

    func testOpeningAFileThatIsNotADatabaseFailsWithCorrupt() throws {
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: path()))
        assertStorageError(.corrupt) { try open() }
    }
}
