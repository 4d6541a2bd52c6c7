import Foundation
import Storage
import StoreTestSupport
import XCTest

@testable import Accounts

/// Every statement of the ledger's hot paths (balances, transfer, code, confirm, deposit,
/// history) reads through an index (SQLite's plan says SEARCH, never SCAN) and sorts nothing:
/// their cost does not grow with the ledger's history, nor with the user's own.
final class QueryPlanTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "ledger-plans-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testTransferConfirmDepositAndHistoryReadByIndex() throws {
        let recorder = QueryPlanRecorder(try Database(path: directory + "/a.sqlite", migrations: LedgerSchema.sqlite))
        let store = SQLLedgerStore(database: recorder, groupCommitMax: 1)
        let now: Int64 = 1_800_000_000_000
        for user in ["u_1", "u_2"] {
            _ = try store.deposit(NewDeposit(
                id: "tr_d\(user)", userID: user, account: .checking, amountMinor: 10_000, currency: "EUR", idempotencyKey: "d",
                now: now, maxBalanceMinor: 1_000_000_000))
            for index in 0..<3 { try transfer(store, user: user, key: "h\(index)", now: now) }
        }
        _ = recorder.take()

        _ = try store.balances(userID: "u_1")
        try transfer(store, user: "u_1", key: "measured", now: now)
        let page = try store.history(userID: "u_1", limit: 3, beforeLedgerID: nil)
        _ = try store.history(userID: "u_1", limit: 3, beforeLedgerID: page.last?.ledgerID)
        _ = try store.deposit(NewDeposit(
            id: "tr_dd", userID: "u_1", account: .saving, amountMinor: 5, currency: "EUR", idempotencyKey: "d2", now: now,
            maxBalanceMinor: 1_000_000_000))
        let plans = recorder.take()

        XCTAssertGreaterThan(plans.count, 15, "the paths ran")
        for plan in plans {
            XCTAssertEqual(plan.scans, [], "\(plan)")
            XCTAssertEqual(plan.sorts, [], "\(plan)")
        }
    }

    /// Only a transfer whose code is attached is ever looked up by that code: the index by code
    /// holds those alone, so a reservation (and every deposit) adds no entry to it, and
    /// attaching the code adds one instead of moving it from among the reservations.
    func testTheIndexByCodeHoldsOnlyTransfersWithACode() throws {
        let database = try Database(path: directory + "/a.sqlite", migrations: LedgerSchema.sqlite)
        let store = SQLLedgerStore(database: database, groupCommitMax: 1)
        let now: Int64 = 1_800_000_000_000
        _ = try store.deposit(NewDeposit(
            id: "tr_d", userID: "u_1", account: .checking, amountMinor: 10_000, currency: "EUR", idempotencyKey: "d", now: now,
            maxBalanceMinor: 1_000_000_000))
        try transfer(store, user: "u_1", key: "booked", now: now)
        let reserved = NewTransfer(
            id: "tr_reserved", userID: "u_1", from: .checking, to: .saving, amountMinor: 1, currency: "EUR", idempotencyKey: "r", now: now,
            expiresAt: now + 300_000)
        guard case .reserved = try store.reserveTransfer(reserved, staleBefore: now - 30_000) else { return XCTFail("not reserved") }

        let byName = try entriesByTree(database, named: "transfers%")
        XCTAssertEqual(byName["transfers"], 3, "the deposit, the booked transfer and the reservation: \(byName)")
        XCTAssertEqual(byName["transfers_by_request"], 1, "the booked transfer alone had a code: \(byName)")
        XCTAssertEqual(try store.pendingTransfer(userID: "u_1", requestID: "vr_u_1_booked")?.id, nil, "booked, no longer pending")
    }

    /// One transfer the way the service runs it: reserve, attach the code, find it by code, book it.
    private func transfer(_ store: SQLLedgerStore, user: String, key: String, now: Int64) throws {
        let request = NewTransfer(
            id: "tr_\(user)_\(key)", userID: user, from: .checking, to: .saving, amountMinor: 1, currency: "EUR", idempotencyKey: key,
            now: now, expiresAt: now + 300_000)
        _ = try store.existingTransfer(userID: user, idempotencyKey: key)
        guard case .reserved(let reserved) = try store.reserveTransfer(request, staleBefore: now - 30_000) else {
            return XCTFail("not reserved")
        }
        XCTAssertNotNil(try store.attachCode(transferID: reserved.id, userID: user, requestID: "vr_\(user)_\(key)"))
        XCTAssertNotNil(try store.pendingTransfer(userID: user, requestID: "vr_\(user)_\(key)"))
        XCTAssertEqual(try store.transfer(id: reserved.id, userID: user)?.state, .pending)
        guard case .done = try store.complete(transferID: reserved.id, userID: user, now: now) else { return XCTFail("not booked") }
    }
}
