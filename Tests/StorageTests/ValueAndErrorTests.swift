import Foundation
import XCTest

@testable import Storage

final class ValueAndErrorTests: StorageTestCase {
    func testEveryValueKindRoundTripsExactly() throws {
        // A column without a declared type keeps every value in the storage class it was bound as.
        let db = try open(migrations: [Migration(version: 1, name: "v", sql: "CREATE TABLE v (id INTEGER PRIMARY KEY, x)")])
        let values: [SQLValue] = [
            .null, nil,
            .integer(0), .integer(Int64.min), .integer(Int64.max), 42,
            .real(3.25), .real(-0.5), .real(Double.greatestFiniteMagnitude), 1.5,
            .text(""), .text("plain"), .text("ünïcødé ✓ 日本語 👩‍👩‍👧"), .text("nul\u{0}inside"), "literal",
            .blob([]), .blob([0, 1, 2, 255]), .blob([UInt8](repeating: 0xAB, count: 100_000)),
        ]
        let ids = try db.write { c in
            try values.map { v in
                try c.queryOne("INSERT INTO v (x) VALUES (?) RETURNING id", [v])!.int("id")
            }
        }
        let rows = try db.read { c in try c.query("SELECT id, x FROM v ORDER BY id") }
        XCTAssertEqual(try rows.map { try $0.int("id") }, ids)
        XCTAssertEqual(rows.map { $0["x"] }, values)
        // Empty text and empty blob are not NULL.
        XCTAssertEqual(try rows[10].optionalString("x"), "")
        XCTAssertEqual(try rows[15].optionalBlob("x"), [])
        XCTAssertNil(try rows[0].optionalString("x"))
    }

    func testConvenienceInitializersAndTypedAccessors() throws {
        XCTAssertEqual(SQLValue(7), .integer(7))
        XCTAssertEqual(SQLValue(Int64(-7)), .integer(-7))
        XCTAssertEqual(SQLValue("s"), .text("s"))
        XCTAssertEqual(SQLValue([1, 2] as [UInt8]), .blob([1, 2]))
        XCTAssertEqual(SQLValue(true), .integer(1))
        XCTAssertEqual(SQLValue(false), .integer(0))
        XCTAssertEqual(SQLValue(Int?.none), .null)
        XCTAssertEqual(SQLValue(Int?.some(3)), .integer(3))
        XCTAssertEqual(SQLValue(String?.none), .null)
        XCTAssertEqual(SQLValue([UInt8]?.none), .null)
        XCTAssertEqual(SQLValue(Bool?.some(true)), .integer(1))

        let db = try open(migrations: [])
        let row = try db.read { c in
            try c.queryOne("SELECT 5 AS i, 2.5 AS r, 't' AS s, x'0102' AS b, NULL AS n, 1 AS flag", [])!
        }
        XCTAssertEqual(try row.int("i"), 5)
        XCTAssertEqual(try row.double("r"), 2.5)
        XCTAssertEqual(try row.double("i"), 5.0)
        XCTAssertEqual(try row.string("s"), "t")
        XCTAssertEqual(try row.blob("b"), [1, 2])
        XCTAssertEqual(try row.bool("flag"), true)
        XCTAssertNil(try row.optionalInt("n"))
        XCTAssertNil(try row.optionalString("n"))
        XCTAssertNil(try row.optionalBlob("n"))
        XCTAssertEqual(try row.optionalInt("i"), 5)
        XCTAssertEqual(row["missing"], .null)
        XCTAssertEqual(row.columns, ["i", "r", "s", "b", "n", "flag"])
    }

    func testRowErrorsNameTheColumnAndTypesButNeverTheValue() throws {
        let db = try open(migrations: [])
        let row = try db.read { c in try c.queryOne("SELECT ? AS secret_col", ["hunter2-password"])! }
        let wrongType = assertStorageError(.column("column 'secret_col' is TEXT, expected INTEGER")) { try row.int("secret_col") }
        XCTAssertFalse(String(describing: wrongType).contains("hunter2"))
        assertStorageError(.column("no column named 'nope' in the result")) { try row.string("nope") }
        assertStorageError(.column("column 'secret_col' is TEXT, expected BLOB")) { try row.optionalBlob("secret_col") }
    }

    func testUniqueViolationMapsToConstraintUniqueWithoutTheBoundValue() throws {
        let db = try open()
        try db.write { c in try c.run("INSERT INTO items (name) VALUES (?)", ["alice@example.com"]) }
        let error = assertStorageError(.constraintUnique("items.name")) {
            try db.write { c in try c.run("INSERT INTO items (name) VALUES (?)", ["alice@example.com"]) }
        }
        let text = String(describing: error!)
        XCTAssertEqual(text, "unique constraint failed: items.name")
        XCTAssertFalse(text.contains("alice"))
        XCTAssertEqual(try count(db), 1)
    }

    func testPrimaryKeyViolationAlsoMapsToConstraintUnique() throws {
        let db = try open()
        try db.write { c in try c.run("INSERT INTO items (id, name) VALUES (?, ?)", [7, "a"]) }
        assertStorageError(.constraintUnique("items.id")) {
            try db.write { c in try c.run("INSERT INTO items (id, name) VALUES (?, ?)", [7, "b"]) }
        }
    }

    func testOtherConstraintsMapToConstraint() throws {
        let db = try open()
        let error = assertStorageError(.constraint("items.name")) {
            try db.write { c in try c.run("INSERT INTO items (name) VALUES (?)", [nil]) }
        }
        XCTAssertEqual(error?.description, "constraint failed: items.name")
    }

    func testWrongNumberOfBindingsIsMisuseAndNothingIsSpliced() throws {
        let db = try open()
        assertStorageError(.misuse("statement expects 1 bindings, got 0")) {
            try db.write { c in try c.run("INSERT INTO items (name) VALUES (?)") }
        }
        // A value that looks like SQL is stored as data.
        let evil = "x'); DROP TABLE items; --"
        try db.write { c in try c.run("INSERT INTO items (name) VALUES (?)", [.text(evil)]) }
        XCTAssertEqual(try db.read { c in try c.queryOne("SELECT name FROM items")!.string("name") }, evil)
    }
}
