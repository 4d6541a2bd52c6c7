import Foundation
import XCTest

@testable import Storage

/// The statement cache finds a text it saw by where the string lies, and anything else by its
/// contents: never another text's statement, however strings come and go.
final class StatementCacheTests: StorageTestCase {
    func testALiteralIsFoundWithoutHashingItsTextAfterTheFirstTime() throws {
        let db = try open()
        func insert(_ i: Int) throws {
            try db.write { c in try c.run("INSERT INTO items (name, qty) VALUES (?, ?)", [.text("n\(i)"), SQLValue(i)]) }
        }
        try insert(0)
        let before = db.withWriter { $0.statementLookupsByText }
        for i in 1...50 { try insert(i) }
        // BEGIN IMMEDIATE and COMMIT (short texts) and the INSERT: none looked up by its contents again.
        XCTAssertEqual(db.withWriter { $0.statementLookupsByText }, before)
        XCTAssertEqual(try count(db), 51)
    }

    func testATextBuiltAtRunTimeSharesTheStatementOfTheSameText() throws {
        let db = try open()
        let column = "qty"
        try db.write { c in _ = try c.query("SELECT \(column) FROM items WHERE id = ?", [1]) }
        let prepared = db.withWriter { $0.prepareCount }
        try db.write { c in _ = try c.query("SELECT \(column) FROM items WHERE id = ?", [1]) }
        XCTAssertEqual(db.withWriter { $0.prepareCount }, prepared, "the same text, built again, was compiled again")
    }

    /// Thousands of texts built and dropped, past the cache's limit: a freed text's storage may be
    /// reused by the next one, which must still get its own statement.
    func testEveryTextGetsItsOwnStatementWhileStringsComeAndGo() throws {
        let db = try open()
        try db.write { c in
            for i in 0..<(StatementCache.limit * 3) {
                let row = try XCTUnwrap(c.queryOne("SELECT \(i) AS n, 'padding so the text is not a short string' AS p"))
                XCTAssertEqual(try row.int("n"), Int64(i))
            }
            // And the literals of before are still right after the restarts.
            for i in 0..<3 {
                XCTAssertEqual(try c.queryOne("SELECT ? + 1 AS n, 'a literal long enough to have an address' AS p", [SQLValue(i)])?.int("n"), Int64(i + 1))
            }
        }
    }

    /// A text found by its contents is remembered by where the caller's copy lies, and that copy
    /// is dropped right after: the next text built, of the same length, is likely to be given the
    /// same storage, and must not be taken for the first.
    func testATextBuiltInTheStorageOfAnEqualTextDroppedBeforeGetsItsOwnStatement() throws {
        let db = try open()
        func first() -> String { "SELECT \(Int.random(in: 1...1)) AS n, 'padding so the text has storage'" }
        try db.write { c in
            XCTAssertEqual(try c.queryOne(first())?.int("n"), 1)
            for i in 0..<200 {
                XCTAssertEqual(try c.queryOne(first())?.int("n"), 1)
                let digit = 2 + i % 8
                XCTAssertEqual(try c.queryOne("SELECT \(digit) AS n, 'padding so the text has storage'")?.int("n"), Int64(digit))
            }
        }
    }

    func testRestartingPastTheLimitKeepsAnswersRight() throws {
        var cache = StatementCache()
        let db = try open()
        let statements = try db.withWriter { c in
            try (0..<(StatementCache.limit + 1)).map { i in try Statement(connection: c.db, sql: "SELECT \(i) AS n, 'long enough to have an address'") }
        }
        for (i, statement) in statements.enumerated() { cache.insert(statement, for: "SELECT \(i) AS n, 'long enough to have an address'") }
        XCTAssertEqual(cache.count, 1, "the cache restarted at its limit and kept the newest text")
        let last = "SELECT \(StatementCache.limit) AS n, 'long enough to have an address'"
        XCTAssertTrue(cache.statement(for: last) === statements.last)
        XCTAssertNil(cache.statement(for: "SELECT 0 AS n, 'long enough to have an address'"))
    }
}
