@testable import Accounts
import Foundation
import LineProtocol
import RPC
import StoreTestSupport
import TestSupport
import XCTest


/// Twins: the same `accounts.transfer` (same idempotency key) sent many times at once, as a
/// client retrying over a flaky network does. Real SQLite file (or PostgreSQL schema), real threads, and a verification
/// stand-in that allows one live code per user like the real one.
class TwinTransferTests: AccountsTestCase {
    /// Runs `body` on `count` threads released together, and returns what each one answered.
    private func burst(_ count: Int, _ body: @escaping @Sendable () throws -> String) -> [String] {
        let gate = DispatchSemaphore(value: 0)
        let finished = DispatchGroup()
        let outcomes = SharedList<String>()
        for _ in 0..<count {
            finished.enter()
            Thread {
                gate.wait()
                do {
                    outcomes.append(try body())
                } catch {
                    outcomes.append("error:" + (((error as? RPCErrorConvertible)?.rpcError ?? error as? RPCError)?.reasonText ?? "\(error)"))
                }
                finished.leave()
            }.start()
        }
        for _ in 0..<count { gate.signal() }
        XCTAssertEqual(finished.wait(timeout: .now() + 60), .success, "the twins did not all answer")
        return outcomes.all
    }

    func testTwentyTwinsAllGetTheOneRecordedTransferAndItIsBookedOnce() throws {
        verification.oneLiveCodePerUser = true
        try fund("u1", .checking, 1_000)
        let service = self.service!
        let request = TransferRequest(from: .checking, to: .saving, amountMinor: 250, idempotencyKey: "twin-1")
        let answers = burst(20) {
            let ticket = try service.transfer(userID: "u1", request, context: nil).transfer
            return "\(ticket.id) \(ticket.state.rawValue) \(ticket.requestID ?? "-")"
        }
        XCTAssertEqual(Set(answers).count, 1, "every twin answers the same transfer, state and code: \(answers)")
        XCTAssertEqual(answers.count, 20)
        let parts = try XCTUnwrap(answers.first).split(separator: " ").map(String.init)
        guard parts.count == 3 else { return XCTFail("not a transfer: \(parts)") }
        XCTAssertEqual(parts[1], "pending")
        XCTAssertEqual(verification.startCount, 1, "one code was sent for the one transfer")

        let transfer = try XCTUnwrap(try store.transfer(id: parts[0], userID: "u1"))
        _ = try service.confirm(userID: "u1", transferID: transfer.id, code: code(for: transfer), context: nil)
        XCTAssertEqual(try balance("u1", .checking), 750)
        XCTAssertEqual(try balance("u1", .saving), 250)
        XCTAssertEqual(try service.history(userID: "u1", limit: 100, before: nil).entries.filter { $0.transferID == transfer.id }.count, 2,
                       "booked once: one ledger pair")
        // A twin arriving after the booking still gets the same transfer, now done.
        XCTAssertEqual(try service.transfer(userID: "u1", request, context: nil).transfer.state, .done)
        try assertAuditClean()
    }

    func testOnlyATransferWithAnotherKeySupersedesThePendingOne() throws {
        verification.oneLiveCodePerUser = true
        try fund("u1", .checking, 1_000)
        let first = try transfer("u1", .checking, .saving, 100, key: "k1")
        XCTAssertEqual(try transfer("u1", .checking, .saving, 100, key: "k1"), first, "a retry does not supersede")
        XCTAssertEqual(try store.transfer(id: first.id, userID: "u1")?.state, .pending)
        let second = try transfer("u1", .checking, .saving, 100, key: "k2")
        XCTAssertEqual(try store.transfer(id: first.id, userID: "u1")?.state, .cancelled)
        _ = try service.confirm(userID: "u1", transferID: second.id, code: code(for: second), context: nil)
        XCTAssertEqual(try balance("u1", .checking), 900)
    }

    func testAReservationLeftByADeadProcessIsTakenOverByARetryOnceStale() throws {
        try fund("u1", .checking, 1_000)
        // What a process killed between recording the transfer and starting its code leaves behind.
        let orphan = NewTransfer(
            id: "tr_orphan", userID: "u1", from: .checking, to: .saving, amountMinor: 300, currency: service.settings.currency,
            idempotencyKey: "k1", now: clock.nowSeconds, expiresAt: clock.nowSeconds + service.settings.transferExpirySeconds)
        guard case .reserved = try store.reserveTransfer(orphan, staleBefore: clock.nowSeconds - 1) else { return XCTFail("not reserved") }
        var waiting = service.settings
        waiting.twinWaitMilliseconds = 100
        let impatient = AccountsService(store: store, verification: verification, settings: waiting, clock: { [clock] in clock!.nowSeconds })
        let request = TransferRequest(from: .checking, to: .saving, amountMinor: 300, idempotencyKey: "k1")
        assertReason(.conflict) { _ = try impatient.transfer(userID: "u1", request, context: nil) }
        XCTAssertEqual(verification.startCount, 0, "a fresh reservation belongs to its twin: no second code")

        clock.advance(seconds: service.settings.codeStartTimeoutSeconds + 1)
        let taken = try impatient.transfer(userID: "u1", request, context: nil).transfer
        XCTAssertEqual(taken.id, "tr_orphan")
        XCTAssertEqual(taken.state, .pending)
        XCTAssertNotNil(taken.requestID)
        XCTAssertEqual(verification.request(taken.requestID!)?.payload["transfer_id"], "tr_orphan", "the code names the transfer")
        _ = try impatient.confirm(userID: "u1", transferID: taken.id, code: code(for: taken), context: nil)
        XCTAssertEqual(try balance("u1", .saving), 300)
        try assertAuditClean()
    }
}

/// The same twins on PostgreSQL. (Linux test discovery lists inherited tests only for a class
/// that declares one of its own.)
final class TwinTransferOnPostgresTests: TwinTransferTests {
    override class var backend: TestBackend { .postgres }

    func testRunsOnPostgres() { XCTAssertEqual(store.database.dialect, .postgres) }
}
