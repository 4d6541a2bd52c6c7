import Foundation
import XCTest

@testable import Storage

final class ColumnIndexTests: StorageTestCase {
    func testEveryNameIsFoundAtItsPositionAndAnAbsentOneIsNot() {
        // Enough names that several share a slot and are found by probing on.
        let names = (0..<40).map { "column_\($0)" } + ["id", "a_name_longer_than_fifteen_bytes"]
        let index = ColumnIndex(names: names)
        for (position, name) in names.enumerated() { XCTAssertEqual(index.position(of: name), position, name) }
        XCTAssertNil(index.position(of: "column_40"))
        XCTAssertNil(index.position(of: ""))
    }

    func testTheFirstOfDuplicateNamesWins() {
        let index = ColumnIndex(names: ["n", "m", "n"])
        XCTAssertEqual(index.position(of: "n"), 0)
        XCTAssertEqual(index.uniqueNames, ["n", "m"])
    }

    func testRowsReadByNameFromAQuery() throws {
        let db = try open()
        try db.write { c in try c.run("INSERT INTO items (name, qty) VALUES (?, ?)", ["x", 7]) }
        let row = try XCTUnwrap(db.read { c in try c.queryOne("SELECT qty, name, qty AS qty FROM items") })
        XCTAssertEqual(try row.int("qty"), 7)
        XCTAssertEqual(try row.string("name"), "x")
        XCTAssertEqual(row.columns, ["qty", "name"])
        XCTAssertEqual(row["missing"], .null)
        XCTAssertThrowsError(try row.int("missing"))
    }
}
