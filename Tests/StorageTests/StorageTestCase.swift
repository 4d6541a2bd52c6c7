import Foundation
import TestSupport
import XCTest

@testable import Storage

/// A fresh temporary directory per test, removed afterwards.
class StorageTestCase: XCTestCase {
    var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "storage-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        // Restore write permission first in case a test made something read-only.
        if let names = try? FileManager.default.contentsOfDirectory(atPath: directory) {
            for name in names { chmod(directory + "/" + name, 0o644) }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    func path(_ name: String = "test.sqlite") -> String { directory + "/" + name }

    static let itemsMigration = Migration(
        version: 1, name: "items",
        sql: "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, qty INTEGER NOT NULL DEFAULT 0)")

    func open(
        _ name: String = "test.sqlite", options: DatabaseOptions = .init(),
        migrations: [Migration] = [StorageTestCase.itemsMigration]
    ) throws -> Database {
        try Database(path: path(name), options: options, migrations: migrations)
    }

    func count(_ db: Database, _ table: String = "items") throws -> Int64 {
        try db.read { c in try c.queryOne("SELECT COUNT(*) AS n FROM \(table)")!.int("n") }
    }

    /// Asserts `body` throws a StorageError equal to `expected`; returns it for further checks.
    @discardableResult
    func assertStorageError<T>(
        _ expected: StorageError, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> T
    ) -> StorageError? {
        do {
            _ = try body()
            XCTFail("expected \(expected), nothing was thrown", file: file, line: line)
            return nil
        } catch let error as StorageError {
            XCTAssertEqual(error, expected, file: file, line: line)
            return error
        } catch {
            XCTFail("expected \(expected), got \(error)", file: file, line: line)
            return nil
        }
    }
}

struct DomainFailure: Error, Equatable { let reason: String }
