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

    func testBackupInStepsReportsProgressUpToEveryPageAndCopiesEverything() throws {
        let live = try Database(path: path(), migrations: migrations)
        try live.write { connection in
            for index in 0..<2000 { try connection.run("INSERT INTO items (name) VALUES (?)", [.text(String(repeating: "x", count: 100) + "\(index)")]) }
        }
        var reports: [(copied: Int, total: Int)] = []
        try Database.backup(databaseAt: path(), to: path("stepped.sqlite"), pagesPerStep: 8) { reports.append(($0, $1)) }
        XCTAssertGreaterThan(reports.count, 2, "a database of many pages is copied in several steps")
        XCTAssertEqual(reports.map(\.copied), reports.map(\.copied).sorted(), "progress only grows")
        XCTAssertEqual(reports.last?.copied, reports.last?.total)
        let copy = try Database(path: path("stepped.sqlite"), migrations: migrations)
        XCTAssertEqual(try copy.read { try $0.queryOne("SELECT COUNT(*) AS n FROM items")?.int("n") }, 2000)
    }

    func testBackupOfAMissingFileFailsClearlyAndWritesNothing() {
        XCTAssertThrowsError(try Database.backup(databaseAt: path("absent.sqlite"), to: path("out.sqlite")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("out.sqlite")))
    }
}
