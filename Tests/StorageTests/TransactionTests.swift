import CSQLite
import Foundation
import TestSupport
import XCTest

@testable import Storage

final class TransactionTests: StorageTestCase {
    func testAnErrorThrownInsideWriteRollsEverythingBackAndIsTheOneRethrown() throws {
        let db = try open()
        do {
            try db.write { c in
                try c.run("INSERT INTO items (name) VALUES (?)", ["a"])
                try c.run("INSERT INTO items (name) VALUES (?)", ["b"])
                throw DomainFailure(reason: "insufficient_funds")
            }
            XCTFail("write must rethrow")
        } catch {
            XCTAssertEqual(error as? DomainFailure, DomainFailure(reason: "insufficient_funds"))
        }
        XCTAssertEqual(try count(db), 0)
        // The writer is usable afterwards (no transaction left open).
        try db.write { c in try c.run("INSERT INTO items (name) VALUES (?)", ["c"]) }
        XCTAssertEqual(try count(db), 1)
    }

    func testTheFirstErrorSurvivesWhenTheRollbackItselfCannotRun() throws {
        let db = try open()
        do {
            try db.write { c in
                try c.run("INSERT INTO items (name) VALUES (?)", ["a"])
                try c.execute("ROLLBACK")  // the transaction is gone: our ROLLBACK would fail
                throw DomainFailure(reason: "first")
            }
            XCTFail("write must rethrow")
        } catch {
            XCTAssertEqual(error as? DomainFailure, DomainFailure(reason: "first"))
        }
        XCTAssertEqual(try count(db), 0)
        try db.write { c in try c.run("INSERT INTO items (name) VALUES (?)", ["b"]) }
        XCTAssertEqual(try count(db), 1)
    }

    func testAFailedCommitRollsBackAndLeavesTheWriterUsable() throws {
        // A deferred foreign key is checked at COMMIT; SQLite keeps the transaction open when it fails.
        let db = try open(migrations: [
            Migration(version: 1, name: "fk", sql: """
                CREATE TABLE parent (id INTEGER PRIMARY KEY);
                CREATE TABLE child (id INTEGER PRIMARY KEY,
                    parent_id INTEGER NOT NULL REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED);
                """)
        ])
        assertStorageError(.constraint("FOREIGN KEY constraint failed")) {
            try db.write { c in try c.run("INSERT INTO child (parent_id) VALUES (?)", [99]) }
        }
        XCTAssertEqual(try count(db, "child"), 0)
        try db.write { c in
            try c.run("INSERT INTO parent (id) VALUES (?)", [1])
            try c.run("INSERT INTO child (parent_id) VALUES (?)", [1])
        }
        XCTAssertEqual(try count(db, "child"), 1)
    }

    func testWriteReturnsTheBodysValue() throws {
        let db = try open()
        let id = try db.write { c in
            try c.queryOne("INSERT INTO items (name) VALUES (?) RETURNING id", ["a"])!.int("id")
        }
        XCTAssertEqual(try db.read { c in try c.queryOne("SELECT id FROM items WHERE name = ?", ["a"])!.int("id") }, id)
        XCTAssertEqual(try db.write { c in try c.run("UPDATE items SET qty = qty + 1") }, 1)
    }

    func testAReaderSeesAConsistentSnapshotWhileTheWriterCommits() throws {
        let db = try open()
        try db.write { c in try c.run("INSERT INTO items (name) VALUES (?)", ["before"]) }
        let writerDone = DispatchSemaphore(value: 0)
        let writerError = Locked<(any Error)?>(nil)
        try db.read { c in
            XCTAssertEqual(try c.queryOne("SELECT COUNT(*) AS n FROM items")!.int("n"), 1)  // snapshot taken
            Thread.detachNewThread {
                do { try db.write { c in try c.run("INSERT INTO items (name) VALUES (?)", ["during"]) } } catch {
                    writerError.withLock { $0 = error }
                }
                writerDone.signal()
            }
            // The open read must not block the writer (WAL).
            XCTAssertEqual(writerDone.wait(timeout: .now() + 10), .success, "writer blocked by a reader")
            XCTAssertNil(writerError.current)
            XCTAssertEqual(try c.queryOne("SELECT COUNT(*) AS n FROM items")!.int("n"), 1, "open read saw a later commit")
            XCTAssertNil(try c.queryOne("SELECT id FROM items WHERE name = ?", ["during"]))
        }
        XCTAssertEqual(try count(db), 2, "a new read sees the commit")
    }

    func testWritesThroughAReaderFailWithReadOnly() throws {
        let db = try open()
        assertStorageError(.readOnly) {
            try db.read { c in try c.run("INSERT INTO items (name) VALUES (?)", ["x"]) }
        }
        XCTAssertEqual(try count(db), 0)
    }

    func testConcurrentWritersFrom8ThreadsAreSerialized() throws {
        let db = try open(
            options: DatabaseOptions(busyTimeoutMilliseconds: 5000, synchronous: .normal, readerCount: 2),
            migrations: [Migration(version: 1, name: "counter", sql: "CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL); INSERT INTO counter VALUES (1, 0);")])
        let errors = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<200 {
                do {
                    // Read-modify-write: lost updates would show if two writers ever overlapped.
                    try db.write { c in
                        let n = try c.queryOne("SELECT n FROM counter WHERE id = 1")!.int("n")
                        try c.run("UPDATE counter SET n = ? WHERE id = 1", [.integer(n + 1)])
                    }
                    _ = try db.read { c in try c.queryOne("SELECT n FROM counter WHERE id = 1") }
                } catch {
                    errors.withLock { $0.append(String(describing: error)) }
                }
            }
        }
        XCTAssertEqual(errors.current, [])
        XCTAssertEqual(try db.read { c in try c.queryOne("SELECT n FROM counter")!.int("n") }, 1600)
    }

    func testStatementsArePreparedOnceAndReusedOnTheHotPath() throws {
        let db = try open()
        func insert(_ i: Int) throws {
            try db.write { c in try c.run("INSERT INTO items (name, qty) VALUES (?, ?)", [.text("n\(i)"), SQLValue(i)]) }
        }
        try insert(0)
        _ = try db.read { c in try c.query("SELECT name FROM items WHERE qty >= ?", [0]) }
        let writerPrepares = db.withWriter { $0.prepareCount }
        for i in 1...100 { try insert(i) }
        XCTAssertEqual(db.withWriter { $0.prepareCount }, writerPrepares, "the write path re-prepared statements")
        // Readers: every reader in the pool prepares a statement at most once.
        for _ in 0..<100 {
            _ = try db.read { c in try c.query("SELECT name FROM items WHERE qty >= ?", [0]) }
        }
        let readerPrepares = try db.read { c in (c as! SQLiteConnection).prepareCount }
        XCTAssertLessThanOrEqual(readerPrepares, 5)  // its two pragmas at open, BEGIN, the SELECT, COMMIT
        // A new SQL text is prepared exactly once more.
        try db.write { c in try c.run("UPDATE items SET qty = qty + 1 WHERE id = ?", [1]) }
        try db.write { c in try c.run("UPDATE items SET qty = qty + 1 WHERE id = ?", [2]) }
        XCTAssertEqual(db.withWriter { $0.prepareCount }, writerPrepares + 1)
    }

    /// With memory statistics on, every allocation SQLite makes takes one lock shared by the
    /// whole process. They are off before the first database opens; `sqlite3_memory_used` then
    /// reads 0 however much the open connections hold.
    func testSQLiteKeepsNoMemoryStatisticsOnceADatabaseIsOpen() throws {
        let db = try open()
        try db.write { c in try c.run("INSERT INTO items (name, qty) VALUES (?, ?)", ["a", 1]) }
        XCTAssertEqual(try count(db), 1)
        XCTAssertEqual(sqlite3_memory_used(), 0)
    }

    /// A cached statement keeps its column names from one query to the next, and learns new ones
    /// when a schema change makes SQLite recompile it: here a column renamed under a `SELECT *`.
    func testACachedStatementReadsColumnNamesAnewAfterTheSchemaChanges() throws {
        let db = try open()
        try db.write { c in try c.run("INSERT INTO items (name, qty) VALUES (?, ?)", ["a", 7]) }
        try db.write { c in
            XCTAssertEqual(try c.queryOne("SELECT * FROM items WHERE name = ?", ["a"])?.int("qty"), 7)
            XCTAssertEqual(try c.queryOne("SELECT * FROM items WHERE name = ?", ["a"])?.int("qty"), 7)
            try c.run("ALTER TABLE items RENAME COLUMN qty TO quantity")
            let row = try XCTUnwrap(c.queryOne("SELECT * FROM items WHERE name = ?", ["a"]))
            XCTAssertEqual(try row.int("quantity"), 7)
            XCTAssertEqual(row["qty"], .null, "the old name is gone")
        }
    }
}
