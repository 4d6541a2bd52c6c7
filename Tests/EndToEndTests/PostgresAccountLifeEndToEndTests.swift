import Foundation
import LineProtocol
import RPC
import TestSupport
import XCTest

/// The account's links on PostgreSQL with two identity replicas behind the gateway: a link
/// mailed by one replica is used once whichever replica takes each of 20 parallel uses.
final class PostgresAccountLifeEndToEndTests: PostgresStackTestCase {
    override var replicas: [String: Int] { ["identity": 2] }

    func testTwentyParallelUsesOfOneLinkAcrossTwoReplicasApplyOnce() throws {
        _ = try gateway().result("identity.register", [
            "username": "olga", "password": "correct horse battery", "email": "olga@example.com", "phone": "+15555550100",
        ])
        var token: String?
        XCTAssertTrue(eventually {
            token = outbox().last { $0["to"]?.stringValue == "olga@example.com" }?["text"]?.stringValue
                .flatMap { $0.firstMatch(of: /lke_[A-Za-z0-9_-]{43}/).map { String($0.output) } }
            return token != nil
        })
        let link = try XCTUnwrap(token)
        let outcomes = Tally()
        let gatewayEndpoint = stack.gateway
        DispatchQueue.concurrentPerform(iterations: 20) { _ in
            do {
                let answer = try LineClient(gatewayEndpoint).call("identity.verify_email", ["token": .string(link)])
                switch answer.outcome {
                case .success: outcomes.record("ok")
                case .failure(let error): outcomes.record(error.reasonText ?? "no reason")
                }
            } catch {
                outcomes.record("unexpected: \(error)")
            }
        }
        XCTAssertEqual(outcomes.counts, ["ok": 1, "invalid_token": 19])
        for replica in 0..<2 {
            let metrics = try direct("identity", replica: replica).result("identity.metrics")
            XCTAssertGreaterThan(metrics["methods"]?["identity.verify_email"]?["count"]?.intValue ?? 0, 0, "replica \(replica) took some of the uses")
        }
        XCTAssertEqual(try database.sql("SELECT COUNT(*) FROM identity.audit_events WHERE event = 'email.verified'"), "1")
    }
}
