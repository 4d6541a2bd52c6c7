import Foundation
import LineProtocol
import RPC
import StackLauncher
import TestSupport
import XCTest

/// Deleting an account on the real stack: through the gateway, every service erases its part
/// and the user answers as one that never existed; money left refuses it until the operator's
/// tool settles it; a kill -9 of accounts, verification or identity in the middle ends with
/// the deletion complete once they are back.
final class AccountDeletionEndToEndTests: StackTestCase {
    static let password = "correct horse battery"

    override func stackOptions(_ options: inout Stack.Options) {
        options.environment["LATCHKEY_ERASURE_POLL_MS"] = "20"
        options.environment["LATCHKEY_DELETION_WAIT_MS"] = "1500"
    }

    @discardableResult
    private func register(_ gateway: LineClient) throws -> String {
        try XCTUnwrap(try gateway.result("identity.register", [
            "username": "alice", "password": .string(Self.password), "email": "alice@example.com", "phone": "+15555550100",
        ])["user_id"]?.stringValue)
    }

    /// A password login lifted to aal 2 as a passed code would (identity.elevate).
    private func steppedUp(_ gateway: LineClient) throws -> JSON {
        let login = try appLogin(gateway, "alice", password: Self.password, device: "iphone-1")
        _ = try direct("identity").result("identity.elevate", ["session_id": try XCTUnwrap(login["session_id"]), "factor": "sms"])
        return try XCTUnwrap(login["session"])
    }

    private func deletion(_ userID: String) throws -> JSON {
        try direct("identity").result("identity.operator_deletion", ["user_id": .string(userID)])["deletion"] ?? .null
    }

    private func waitUntilDeleted(_ userID: String, timeoutSeconds: Double = 20) throws {
        var last: JSON = .null
        let done = try eventually(timeoutSeconds: timeoutSeconds, pollMilliseconds: 20) {
            last = try deletion(userID)
            return last["state"] == "deleted"
        }
        XCTAssertTrue(done, "the deletion stayed at \(last)")
    }

    private func mails(to address: String, containing text: String) -> [JSON] {
        outbox().filter { $0["to"]?.stringValue == address && ($0["subject"]?.stringValue ?? "" + ($0["text"]?.stringValue ?? "")).contains(text) }
    }

    func testEveryServiceErasesItsPartAndTheUserAnswersAsOneThatNeverExisted() throws {
        let gateway = try gateway()
        let userID = try register(gateway)
        let session = try steppedUp(gateway)
        let code = try gateway.result("verification.start", ["session": session])
        let requestID = try XCTUnwrap(code["request_id"])
        XCTAssertEqual(try gateway.result("reset.request", ["email": "alice@example.com"])["ok"], true)
        var resetToken: String?
        XCTAssertTrue(eventually {
            resetToken = outbox().compactMap { $0["text"]?.stringValue?.firstMatch(of: /lkr_[A-Za-z0-9_-]{20,}/).map { String($0.output) } }.last
            return resetToken != nil
        }, "the reset link reached the outbox")

        let answer = try gateway.result("identity.delete_account", ["session": session, "password": .string(Self.password)])
        XCTAssertEqual(answer["ok"], true)
        XCTAssertNotEqual(answer["state"], "closing_accounts", "accounts decided within the wait: \(answer)")
        try waitUntilDeleted(userID)
        XCTAssertEqual(mails(to: "alice@example.com", containing: "account was deleted").count, 1)

        // Every door answers as for a user that never existed.
        assertError(try gateway.call("identity.login", ["username": "alice", "password": .string(Self.password), "device_id": "iphone-1"]), "invalid_credentials")
        assertError(try gateway.call("accounts.balances", ["session": session]), "unauthenticated")
        assertError(try gateway.call("reset.validate", ["token": .string(try XCTUnwrap(resetToken))]), "invalid_token")
        assertError(try direct("verification").call("verification.status", ["request_id": requestID]), "not_found")
        assertError(try direct("accounts").call("accounts.deposit", [
            "user_id": .string(userID), "account": "checking", "amount": 100, "idempotency_key": "after",
        ]), "conflict")
        let before = outbox().count
        XCTAssertEqual(try gateway.result("reset.request", ["email": "alice@example.com"])["ok"], true)
        XCTAssertFalse(eventually(timeoutSeconds: 1) {
            outbox().dropFirst(before).contains { ($0["text"]?.stringValue ?? "").contains("lkr_") }
        }, "no reset link for an erased address")
        XCTAssertNotEqual(try register(gateway), userID, "the username and the address are free again")
    }

    func testMoneyLeftRefusesTheDeletionUntilTheOperatorSettlesIt() throws {
        let gateway = try gateway()
        let userID = try register(gateway)
        _ = try direct("accounts").result("accounts.deposit", [
            "user_id": .string(userID), "account": "saving", "amount": 4_200, "idempotency_key": "fund",
        ])
        let session = try steppedUp(gateway)
        let refused = try gateway.call("identity.delete_account", ["session": session, "password": .string(Self.password)])
        let error = assertError(refused, "conflict")
        XCTAssertEqual(error?.data?["detail"], "balance_not_zero")
        XCTAssertEqual(error?.data?["balances"]?.arrayValue?.compactMap { $0["balance"]?.intValue }, [0, 4_200])
        XCTAssertNoThrow(try gateway.result("accounts.balances", ["session": session]), "nothing was erased")

        let listed = try OperatorRun.start(tool(["deletions", "--json"]), environment: ProcessInfo.processInfo.environment).finish(timeoutSeconds: 60)
        XCTAssertEqual(listed.status, 0, listed.stderr)
        XCTAssertEqual(try listed.json()["deletions"]?.arrayValue?.map { $0["state"] }, ["blocked"])
        let settled = try OperatorRun.start(tool(["settle-deletion", userID]), environment: ProcessInfo.processInfo.environment).finish(timeoutSeconds: 60)
        XCTAssertEqual(settled.status, 0, settled.stderr)
        XCTAssertTrue(settled.stdout.contains("4200"), settled.stdout)
        try waitUntilDeleted(userID)
        XCTAssertEqual(try direct("accounts").result("accounts.audit", [:])["ok"], true, "the ledger still balances")
        let again = try OperatorRun.start(tool(["settle-deletion", userID]), environment: ProcessInfo.processInfo.environment).finish(timeoutSeconds: 60)
        XCTAssertEqual(again.status, 1, "nothing left to settle")
        XCTAssertTrue(again.stderr.contains("deleted, not blocked"), again.stderr)
    }

    /// kill -9 of accounts and verification before the request, then of identity while the
    /// deletion waits for them: each comes back and the deletion completes, once.
    func testKillNineOfEachServiceMidSagaEndsWithTheDeletionCompleteAfterTheRestarts() throws {
        let gateway = try gateway()
        let userID = try register(gateway)
        let session = try steppedUp(gateway)
        stack.kill("accounts")
        stack.kill("verification")
        let answer = try gateway.result("identity.delete_account", ["session": session, "password": .string(Self.password)])
        XCTAssertEqual(answer["state"], "closing_accounts", "accounts is down: nothing decided yet")
        XCTAssertEqual(try deletion(userID)["waiting_for"], ["accounts", "verification", "reset"])

        stack.kill("identity")
        try stack.restart("identity")
        try stack.restart("accounts")
        XCTAssertTrue(try eventually(timeoutSeconds: 20, pollMilliseconds: 20) { try deletion(userID)["waiting_for"] == ["verification"] })
        XCTAssertEqual(try deletion(userID)["state"], "erasing")
        assertError(try gateway.call("identity.login", ["username": "alice", "password": .string(Self.password), "device_id": "iphone-1"]), "invalid_credentials")
        try stack.restart("verification")
        try waitUntilDeleted(userID)
        XCTAssertEqual(mails(to: "alice@example.com", containing: "account was deleted").count, 1, "the last mail went once")
    }

    private func tool(_ arguments: [String]) -> [String] {
        ["latchkey"] + arguments + ["--identity", stack.replicaList("identity"), "--accounts", stack.replicaList("accounts")]
    }
}
