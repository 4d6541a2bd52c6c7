import Foundation
import XCTest

@testable import Storage

/// A group commit runs each job in its own savepoint, and SQLite keeps the pages a savepoint
/// changes in a sub-journal. Past 64 KB that journal went to a temporary file (`etilqs_*`,
/// unlinked at once), written page by page with a system call each, on every busy batch.
final class SavepointJournalTests: StorageTestCase {
    func testASavepointThatChangesManyPagesKeepsItsJournalInMemory() throws {
        let db = try open()
        let filler = String(repeating: "x", count: 1000)
        try db.write { c in
            for i in 0..<300 { try c.run("INSERT INTO items (name) VALUES (?)", [.text("\(i)-\(filler)")]) }
        }
        var temporaryFilesDuringSavepoint: [String] = []
        try db.write { c in
            try c.execute("SAVEPOINT job")
            // Every row, so every page the table and its index had: about 600 KB of before-images.
            try c.run("UPDATE items SET name = name || 'y', qty = qty + 1")
            temporaryFilesDuringSavepoint = Self.openTemporaryFiles()
            try c.execute("RELEASE SAVEPOINT job")
        }
        XCTAssertEqual(temporaryFilesDuringSavepoint, [], "the sub-journal spilled to a temporary file")
        XCTAssertEqual(try db.read { c in try c.queryOne("SELECT SUM(qty) AS n FROM items")?.int("n") }, 300)
    }

    /// The process's open descriptors that name one of SQLite's temporary files.
    private static func openTemporaryFiles() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap { name in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name) else { return nil }
            return target.contains("etilqs_") ? target : nil
        }
    }
}
