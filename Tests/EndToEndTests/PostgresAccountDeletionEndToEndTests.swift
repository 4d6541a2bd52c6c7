import Foundation
import LineProtocol
import RPC
import StackLauncher
import TestSupport
import XCTest

/// Deletion on PostgreSQL with two replicas of every service: 20 parallel requests through the
/// gateway record one deletion, every replica's follower may take its part, and the deletion
/// ends once: one closing in accounts, one last mail.
final class PostgresAccountDeletionEndToEndTests: PostgresStackTestCase {
    override var replicas: [String: Int] { ["identity": 2, "verification": 2, "accounts": 2, "reset": 2] }

    override func stackOptions(_ options: inout Stack.Options) {
        super.stackOptions(&options)
        options.environment["LATCHKEY_ERASURE_POLL_MS"] = "20"
    }

    func testTwentyParallelRequestsAcrossReplicasDeleteOnce() throws {
        let gateway = try gateway()
        let userID = try XCTUnwrap(try gateway.result("identity.register", [
            "username": "olga", "password": "correct horse battery", "email": "olga@example.com", "phone": "+15555550100",
        ])["user_id"])
        let login = try appLogin(gateway, "olga", password: "correct horse battery", device: "iphone-1")
        _ = try direct("identity").result("identity.elevate", ["session_id": try XCTUnwrap(login["session_id"]), "factor": "sms"])
        let session = try XCTUnwrap(login["session"])

        let outcomes = Tally()
        let gatewayEndpoint = stack.gateway
        DispatchQueue.concurrentPerform(iterations: 20) { _ in
            do {
                let answer = try LineClient(gatewayEndpoint).call("identity.delete_account", ["session": session, "password": "correct horse battery"])
                switch answer.outcome {
                case .success: outcomes.record("ok")
                case .failure(let error): outcomes.record(error.reasonText ?? "no reason")
                }
            } catch {
                outcomes.record("unexpected: \(error)")
            }
        }
        XCTAssertGreaterThan(outcomes.counts["ok"] ?? 0, 0, "\(outcomes.counts)")
        XCTAssertEqual(
            Set(outcomes.counts.keys).subtracting(["ok", "locked", "unauthenticated"]), [],
            "the others met the password's reserved budget, or a session already erased: \(outcomes.counts)")
        XCTAssertTrue(eventually(timeoutSeconds: 30) {
            try database.sql("SELECT state FROM identity.account_deletions WHERE user_id = '\(userID.stringValue ?? "")'") == "deleted"
        })
        XCTAssertEqual(try database.sql("SELECT COUNT(*) FROM identity.account_deletions"), "1")
        XCTAssertEqual(try database.sql("SELECT COUNT(*) FROM accounts.closed_users"), "1")
        XCTAssertEqual(try database.sql("SELECT COUNT(*) FROM identity.users"), "0")
        XCTAssertTrue(eventually { outbox().filter { ($0["subject"]?.stringValue ?? "").contains("account was deleted") }.count == 1 })
        XCTAssertFalse(eventually(timeoutSeconds: 1) { outbox().filter { ($0["subject"]?.stringValue ?? "").contains("account was deleted") }.count > 1 },
                       "the last mail went once")
    }
}
