import XCTest
@testable import Storage

final class OnlineBackupTests: StorageTestCase {
    private let migrations = [Migration(version: 1, name: "items", sql: "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")]

    func testBackupOfALiveDatabaseHoldsEveryCommittedRowIncludingThoseStillInTheWAL() throws {
        let live = try Database(path: path(), migrations: migrations)
        for index in 0..<200 { try live.write { try $0.run("INSERT INTO items (name) VALUES (?)", [.text("item \(index)")]) } }
        // The service keeps its handle open (its WAL is not checkpointed) while the operator backs up.
        try Database.backup(databaseAt: path(), to: path("backup.sqlite"))
        try live.write { try $0.run("INSERT INTO items (name) VALUES ('after')") }

        let copy = try Database(path: path("backup.sqlite"), migrations: migrations)
        let count = try copy.read { try $0.queryOne("SELECT COUNT(*) AS n FROM items")?.int("n") }
        XCTAssertEqual(count, 200, "the copy is the snapshot at backup time")
        XCTAssertEqual(try copy.schemaVersion(), 1)
    }

    func testBackupOfAMissingFileFailsClearlyAndWritesNothing() {
        XCTAssertThrowsError(try Database.backup(databaseAt: path("absent.sqlite"), to: path("out.sqlite")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("out.sqlite")))
    }
}
