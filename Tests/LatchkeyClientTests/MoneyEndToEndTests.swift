import Foundation
import LatchkeyClient
import XCTest

/// Balances, a transfer confirmed by its own code, the idempotency key under a burst of
/// retries, history pages, and the money errors.
final class MoneyEndToEndTests: ClientStackTestCase {
    func testATransferConfirmedByItsCodeMovesTheMoneyAndShowsInHistoryPages() async throws {
        let client = try client()
        try await signInWithCode(client)
        let transfer = try await client.transfer(TransferRequest(from: .checking, to: .saving, amount: 1_250))
        XCTAssertEqual(transfer.status, "pending")
        let requestID = try XCTUnwrap(transfer.requestID)
        let confirmed = try await client.confirmTransfer(transferID: transfer.transferID, code: try await code(for: requestID))
        XCTAssertEqual(confirmed.status, "done")
        XCTAssertEqual(confirmed.transferID, transfer.transferID)
        XCTAssertEqual(confirmed.accounts.map(\.balance), [498_750, 1_001_250])
        let after = try await client.balances()
        XCTAssertEqual(after.map(\.balance), [498_750, 1_001_250])

        // Two deposits and the transfer's two rows, one a page, newest first, each once.
        var entries: [HistoryEntry] = []
        var cursor: Cursor?
        for _ in 0..<10 {
            let page = try await client.history(limit: 1, before: cursor)
            entries += page.entries
            cursor = page.next
            if cursor == nil { break }
        }
        XCTAssertEqual(entries.count, 4)
        XCTAssertEqual(entries.prefix(2).map(\.kind), [.transfer, .transfer])
        XCTAssertEqual(entries.prefix(2).map(\.transferID), [transfer.transferID, transfer.transferID])
        XCTAssertEqual(entries.prefix(2).map(\.entryID), [transfer.transferID, transfer.transferID])
        XCTAssertEqual(Set(entries.prefix(2).map(\.direction)), [.debit, .credit])
        // Deposits: their own ids, no transfer id.
        XCTAssertEqual(entries.suffix(2).map(\.kind), [.deposit, .deposit])
        XCTAssertEqual(entries.suffix(2).map(\.transferID), [nil, nil])
        XCTAssertTrue(entries.suffix(2).allSatisfy { $0.entryID.hasPrefix("dp_") }, "\(entries)")
        XCTAssertEqual(entries.suffix(2).map(\.counterpart), [.external, .external])
    }

    func testTwentyConcurrentSendsOfOneTransferRequestAreOneTransferAndOneCode() async throws {
        let client = try client()
        try await signInWithCode(client)
        let request = TransferRequest(from: .saving, to: .checking, amount: 10_000)
        let answers = try await withThrowingTaskGroup(of: LatchkeyClient.Accounts.Transfer.Response.self) { group in
            for _ in 0..<20 { group.addTask { try await client.transfer(request) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(Set(answers.map(\.transferID)).count, 1)
        let requestID = try XCTUnwrap(answers.first?.requestID)
        let code = try await code(for: requestID)
        XCTAssertEqual(outbox().filter { $0["request_id"]?.stringValue == requestID }.count, 1, "one code for the one transfer")

        _ = try await client.confirmTransfer(transferID: try XCTUnwrap(answers.first?.transferID), code: code)
        // Sent again after the booking, the same request answers the same transfer, done, and moves nothing.
        let again = try await client.transfer(request)
        XCTAssertEqual(again.transferID, answers.first?.transferID)
        XCTAssertEqual(again.status, "done")
        let after = try await client.balances()
        XCTAssertEqual(after.map(\.balance), [510_000, 990_000])
    }

    func testMoneyErrorsAreTyped() async throws {
        let client = try client()
        try await signInWithCode(client)
        await XCTAssertThrowsLatchkeyError(.insufficientFunds) {
            try await client.transfer(TransferRequest(from: .checking, to: .saving, amount: 500_001))
        }
        await XCTAssertThrowsLatchkeyError(.invalidParams(field: "to", rule: nil)) {
            try await client.transfer(TransferRequest(from: .checking, to: .checking, amount: 100))
        }
        let request = TransferRequest(from: .checking, to: .saving, amount: 100)
        let transfer = try await client.transfer(request)
        // The same key for another amount is another request: refused.
        await XCTAssertThrowsLatchkeyError(.conflict(field: nil, detail: nil, status: nil)) {
            try await client.transfer(TransferRequest(from: .checking, to: .saving, amount: 200, idempotencyKey: request.idempotencyKey))
        }
        let right = try await code(for: try XCTUnwrap(transfer.requestID))
        let wrong = right == "000000" ? "111111" : "000000"
        await XCTAssertThrowsLatchkeyError(.invalidCode(attemptsLeft: 2)) {
            try await client.confirmTransfer(transferID: transfer.transferID, code: wrong)
        }
        await XCTAssertThrowsLatchkeyError(.notFound(detail: nil)) {
            try await client.confirmTransfer(transferID: "tr_AAAAAAAAAAAAAAAAAAAAAA", code: right)
        }
        await XCTAssertThrowsLatchkeyError(.invalidParams(field: "limit", rule: nil)) { try await client.history(limit: 0) }
    }
}
