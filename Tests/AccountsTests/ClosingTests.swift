import Foundation
import LineProtocol
import ServiceKit
import Storage
import StoreTestSupport
import TestSupport
import XCTest

@testable import Accounts

/// A deleted user's accounts: closed only when empty, the ledger kept whole under a pseudonym,
/// no money in or out afterwards; the pay-out that settles a blocked deletion.
class ClosingTests: AccountsTestCase {
    private func erase(_ user: String, as pseudonym: String = "del_one") throws -> ErasureFollower.Outcome {
        try service.erase(ErasureFollower.Erasure(userID: user, pseudonym: pseudonym, email: nil, phone: nil))
    }

    func testMoneyLeftRefusesTheCloseAndChangesNothing() throws {
        try fund("u1", .checking, 700)
        guard case .refused(let detail, let balances) = try erase("u1") else { return XCTFail("closed with money left") }
        XCTAssertEqual(detail, "balance_not_zero")
        XCTAssertEqual(balances.arrayValue?.first?["balance"], 700)
        XCTAssertEqual(try service.balances(userID: "u1").map(\.balanceMinor), [700, 0])
        XCTAssertNoThrow(try fund("u1", .saving, 1), "the accounts stay open")
    }

    func testEmptyAccountsCloseUnderThePseudonymWithTheirLedgerWholeAndBalanced() throws {
        try fund("u1", .checking, 900)
        let booked = try transfer("u1", .checking, .saving, 400)
        _ = try service.confirm(userID: "u1", transferID: booked.id, code: code(for: booked), context: nil)
        let pending = try transfer("u1", .saving, .checking, 100)
        for (account, amount) in [(AccountName.checking, Int64(500)), (.saving, 400)] {
            _ = try service.payOut(userID: "u1", account: account, amountMinor: amount, idempotencyKey: "settle-\(account)")
        }
        XCTAssertEqual(try erase("u1"), .done)
        XCTAssertEqual(try erase("u1"), .done, "a repeated close (a lost report) is done again without change")

        XCTAssertEqual(try service.history(userID: "u1", limit: 10, before: nil).entries, [], "nothing names the user id")
        XCTAssertEqual(try service.history(userID: "del_one", limit: 50, before: nil).entries.count, 5, "the ledger is kept under the pseudonym")
        XCTAssertEqual(try store.transfer(id: pending.id, userID: "del_one")?.state, .cancelled, "a pending transfer ends with the accounts")
        XCTAssertEqual(try store.database.read { c in try c.query("SELECT id FROM transfers WHERE user_id = ?", [.text("u1")]).count }, 0)
        try assertAuditClean()
    }

    func testNoMoneyGoesInOrOutOfClosedAccounts() throws {
        XCTAssertEqual(try erase("u1"), .done)
        XCTAssertThrowsError(try fund("u1", .checking, 5)) { error in
            XCTAssertEqual(error as? AccountsError, .conflict("this user's accounts are closed"))
        }
        XCTAssertThrowsError(try service.payOut(userID: "u1", account: .checking, amountMinor: 1, idempotencyKey: "p")) { error in
            XCTAssertEqual(error as? AccountsError, .conflict("this user's accounts are closed"))
        }
    }

    func testAPayOutIsBookedOncePerKeyAndNeverBeyondTheBalance() throws {
        try fund("u1", .checking, 300)
        XCTAssertThrowsError(try service.payOut(userID: "u1", account: .checking, amountMinor: 301, idempotencyKey: "too-much")) { error in
            XCTAssertEqual(error as? AccountsError, .insufficientFunds)
        }
        let results = SharedList<Int64>()
        let service = service!
        DispatchQueue.concurrentPerform(iterations: 20) { _ in
            if let balance = try? service.payOut(userID: "u1", account: .checking, amountMinor: 200, idempotencyKey: "one") { results.append(balance) }
        }
        XCTAssertEqual(results.all, Array(repeating: 100, count: 20), "every twin sees the one pay-out")
        XCTAssertEqual(try service.balances(userID: "u1").map(\.balanceMinor), [100, 0])
        XCTAssertThrowsError(try service.payOut(userID: "u1", account: .checking, amountMinor: 50, idempotencyKey: "one")) { error in
            XCTAssertEqual(error as? AccountsError, .conflict("this idempotency_key was used for a different pay-out"))
        }
        let transfer = try transfer("u1", .checking, .saving, 100, key: "one")
        XCTAssertEqual(transfer.state, .pending, "the user's own key of the same text is another request")
        try assertAuditClean()
    }

    func testTwentyParallelClosesOfTwoUsersCloseEachOnce() throws {
        let service = service!
        let outcomes = Tally()
        DispatchQueue.concurrentPerform(iterations: 20) { index in
            let user = index % 2 == 0 ? "u1" : "u2"
            let outcome = try? service.erase(ErasureFollower.Erasure(userID: user, pseudonym: "del_\(user)", email: nil, phone: nil))
            outcomes.record(outcome == .done ? "done" : "other")
        }
        XCTAssertEqual(outcomes.counts, ["done": 20])
        XCTAssertEqual(try store.database.read { c in try c.query("SELECT pseudonym FROM closed_users ORDER BY pseudonym", []).map { try $0.string("pseudonym") } }, ["del_u1", "del_u2"])
    }
}

final class ClosingOnPostgresTests: ClosingTests {
    override class var backend: TestBackend { .postgres }

    func testRunsOnPostgres() { XCTAssertEqual(store.database.dialect, .postgres) }
}
