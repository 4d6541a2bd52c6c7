import Foundation
import XCTest

@testable import Storage

final class DurabilityTests: StorageTestCase {
    func testBackupProducesAFileThatOpensAndHoldsTheData() throws {
        let db = try open()
        try db.write { c in
            for i in 0..<500 { try c.run("INSERT INTO items (name, qty) VALUES (?, ?)", [.text("item \(i)"), SQLValue(i)]) }
        }
        // Left in the WAL (not checkpointed) on purpose: the backup must include it.
        let target = path("backup.sqlite")
        try db.backup(to: target)
        // Writes after the backup are not in it, and the source is still writable.
        try db.write { c in try c.run("INSERT INTO items (name) VALUES (?)", ["after"]) }

        let restored = try Database(path: target, migrations: [StorageTestCase.itemsMigration])
        XCTAssertEqual(try count(restored), 500)
        XCTAssertEqual(try restored.read { c in try c.queryOne("SELECT SUM(qty) AS s FROM items")!.int("s") }, 499 * 500 / 2)
        XCTAssertEqual(try restored.read { c in try c.queryOne("PRAGMA integrity_check")!.string("integrity_check") }, "ok")
        XCTAssertEqual(try restored.schemaVersion(), 1)
        XCTAssertEqual(try count(db), 501)
        // No temporary file left beside it.
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        XCTAssertFalse(names.contains { $0.contains(".partial-") }, "\(names)")
    }

    func testBackupOverwritesAnOlderBackup() throws {
        let db = try open()
        let target = path("backup.sqlite")
        try db.backup(to: target)
        try db.write { c in try c.run("INSERT INTO items (name) VALUES (?)", ["x"]) }
        try db.backup(to: target)
        XCTAssertEqual(try count(try Database(path: target, migrations: [StorageTestCase.itemsMigration])), 1)
    }

    func testCheckpointFoldsTheWALIntoTheDatabaseFile() throws {
        let db = try open()
        try db.write { c in
            for i in 0..<200 { try c.run("INSERT INTO items (name) VALUES (?)", [.text("n\(i)")]) }
        }
        let wal = path() + "-wal"
        let before = try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int ?? 0
        XCTAssertGreaterThan(before, 0)
        try db.checkpoint()
        let after = try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int ?? -1
        XCTAssertEqual(after, 0)
        XCTAssertEqual(try count(db), 200)
    }

    func testAReadOnlyDatabaseFileGivesReadOnlyOnWriteNotACrash() throws {
        do {
            let db = try open()
            try db.write { c in try c.run("INSERT INTO items (name) VALUES (?)", ["kept"]) }
        }  // closed: the WAL is checkpointed into the file and removed
        XCTAssertEqual(chmod(path(), 0o444), 0)
        // Root (CAP_DAC_OVERRIDE) ignores file modes, so chmod cannot make the file read-only.
        if access(path(), W_OK) == 0 {
            throw XCTSkip("file modes are not enforced for this user (running as root?); chmod 0444 has no effect")
        }
        let db = try open()
        XCTAssertEqual(try count(db), 1)
        assertStorageError(.readOnly) {
            try db.write { c in try c.run("INSERT INTO items (name) VALUES (?)", ["new"]) }
        }
        XCTAssertEqual(try count(db), 1)
    }

    func testDiskFullMapsToFullAndTheDatabaseStaysReadable() throws {
        let db = try open(migrations: [
            StorageTestCase.itemsMigration,
            Migration(version: 2, name: "blobs", sql: "CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB NOT NULL)"),
        ])
        try db.write { c in try c.run("INSERT INTO items (name) VALUES (?)", ["precious"]) }
        try db.withWriter { c in try c.execute("PRAGMA max_page_count = 64") }  // about 256 KiB
        var stored = 0
        var failure: (any Error)?
        for _ in 0..<1000 {
            do {
                try db.write { c in try c.run("INSERT INTO blobs (data) VALUES (?)", [.blob([UInt8](repeating: 0x5A, count: 8000))]) }
                stored += 1
            } catch {
                failure = error
                break
            }
        }
        XCTAssertEqual(failure as? StorageError, .full)
        XCTAssertGreaterThan(stored, 0)
        XCTAssertEqual(try count(db, "blobs"), Int64(stored), "every acknowledged write is still there")
        XCTAssertEqual(try db.read { c in try c.queryOne("SELECT name FROM items")!.string("name") }, "precious")
        // Space can be reclaimed and the writer goes on.
        try db.write { c in try c.run("DELETE FROM blobs") }
        try db.write { c in try c.run("INSERT INTO items (name) VALUES (?)", ["after"]) }
        XCTAssertEqual(try count(db), 2)
    }

    func testCommitProbeMeasuresAPositiveRateAndCleansUp() throws {
        let rate = try CommitProbe.commitsPerSecond(directory: directory, count: 20, synchronous: .normal)
        XCTAssertGreaterThan(rate, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), [])
    }

    /// The probe `latchkey bench transfer` prints as its ceiling: it really commits, and cleans up.
    func testCommitProbeMeasuresRealCommitsAndLeavesNothingBehind() throws {
        let rate = try CommitProbe.commitsPerSecond(directory: directory, count: 50, synchronous: .full)
        XCTAssertGreaterThan(rate, 0)
        XCTAssertTrue(rate.isFinite)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".sqlite") }, [])
    }

    /// The probe times commits on a log that is already full size, as a running service's is:
    /// a fresh file's first commits each extend the log and ran at half the steady rate.
    func testCommitProbeTimesCommitsOnceTheLogHasReachedItsCheckpointSize() throws {
        let probe = try CommitProbe.measure(directory: directory, count: 10, synchronous: .normal)
        // SQLite's defaults: a checkpoint every 1,000 pages of 4,096 bytes, a frame per page.
        XCTAssertGreaterThanOrEqual(probe.walBytesWhenTimed, 1_000 * (4_096 + 24))
        XCTAssertGreaterThan(probe.commitsPerSecond, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), [])
    }
}
