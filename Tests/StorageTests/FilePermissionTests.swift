import Foundation
import Platform
@testable import Storage
import XCTest


/// Service databases hold password hashes, e-mail addresses and phone numbers: the file and its
/// WAL and shared-memory companions are readable by their owner only, whatever the umask.
final class FilePermissionTests: StorageTestCase {
    private var savedUmask: mode_t = 0

    override func setUpWithError() throws {
        try super.setUpWithError()
        // The permissive default of most shells: without care, SQLite would create 0644 files.
        savedUmask = umask(0o022)
    }

    override func tearDownWithError() throws {
        umask(savedUmask)
        try super.tearDownWithError()
    }

    private func mode(_ path: String) -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o777
    }

    func testANewDatabaseAndItsWALAndSHMAreOwnerOnly() throws {
        let db = try open()
        try db.write { c in try c.run("INSERT INTO items (name) VALUES (?)", ["a"]) }
        for suffix in ["", "-wal", "-shm"] {
            XCTAssertEqual(mode(path() + suffix), 0o600, "test.sqlite\(suffix)")
        }
    }

    func testAnExistingWorldReadableDatabaseIsTightenedOnOpen() throws {
        do {
            let db = try open()
            try db.write { c in try c.run("INSERT INTO items (name) VALUES (?)", ["a"]) }
        }
        for suffix in ["", "-wal", "-shm"] where mode(path() + suffix) != nil { chmod(path() + suffix, 0o644) }
        let db = try open()
        try db.write { c in try c.run("INSERT INTO items (name) VALUES (?)", ["b"]) }
        for suffix in ["", "-wal", "-shm"] {
            XCTAssertEqual(mode(path() + suffix), 0o600, "test.sqlite\(suffix)")
        }
    }

    func testABackupIsOwnerOnly() throws {
        let db = try open()
        try db.write { c in try c.run("INSERT INTO items (name) VALUES (?)", ["a"]) }
        try db.backup(to: path("copy.sqlite"))
        XCTAssertEqual(mode(path("copy.sqlite")), 0o600)
        try Database.backup(databaseAt: path(), to: path("offline.sqlite"))
        XCTAssertEqual(mode(path("offline.sqlite")), 0o600)
    }
}
