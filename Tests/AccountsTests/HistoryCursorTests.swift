import LineProtocol
import RPC
import StoreTestSupport
import XCTest

@testable import Accounts

/// `next` was the ledger's row number: it rose with every other user's booking, and any number
/// was taken back as a cursor.
class HistoryCursorTests: AccountsTestCase {
    func testOnlyACursorIssuedToThisUserPages() throws {
        for _ in 0..<3 {
            for user in ["u1", "u2"] { try fund(user, .checking, 100) }
        }
        let mine = try XCTUnwrap(try service.history(userID: "u1", limit: 1, before: nil).next)
        let theirs = try XCTUnwrap(try service.history(userID: "u2", limit: 1, before: nil).next)
        XCTAssertNil(Int64(mine), "the cursor is a sequence number")
        XCTAssertEqual(try service.history(userID: "u1", limit: 1, before: nil).next, mine, "the same page, the same cursor")
        XCTAssertEqual(try service.history(userID: "u1", limit: 1, before: mine).entries.count, 1)
        let tampered = String(mine.dropLast()) + (mine.hasSuffix("A") ? "B" : "A")
        for cursor in [theirs, "999999999", "1", tampered, mine + "A"] {
            XCTAssertThrowsError(try service.history(userID: "u1", limit: 1, before: cursor), cursor) { error in
                let wire = (error as? RPCError) ?? (error as? RPCErrorConvertible)?.rpcError
                XCTAssertEqual(wire?.reason, .invalidParams, cursor)
                XCTAssertEqual(wire?.data?["field"], "before", cursor)
            }
        }
    }

    func testTheHistoryPagesTogetherAreTheWholeHistory() throws {
        try fund("u1", .checking, 1_000)
        try fund("u2", .checking, 1_000)
        for amount in [10, 20, 30] as [Int64] {
            for user in ["u1", "u2"] {
                let pending = try transfer(user, .checking, .saving, amount)
                _ = try service.confirm(userID: user, transferID: pending.id, code: code(for: pending), context: nil)
            }
        }
        let whole = try service.history(userID: "u1", limit: 100, before: nil)
        XCTAssertEqual(whole.entries.count, 7)
        XCTAssertNil(whole.next)
        for limit in 1...3 {
            var pages: [HistoryEntry] = []
            var before: String?
            repeat {
                let page = try service.history(userID: "u1", limit: limit, before: before)
                pages += page.entries
                before = page.next
            } while before != nil && pages.count <= whole.entries.count
            XCTAssertEqual(pages, whole.entries, "pages of \(limit)")
        }
    }
}

/// The same on PostgreSQL (Linux test discovery lists inherited tests only for a class that
/// declares one of its own).
final class HistoryCursorOnPostgresTests: HistoryCursorTests {
    override class var backend: TestBackend { .postgres }

    func testRunsOnPostgres() { XCTAssertEqual(store.database.dialect, .postgres) }
}
