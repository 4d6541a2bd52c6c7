import Foundation
import Secrets
import TestSupport
import XCTest

@testable import Identity

/// Per-address budgets when several identity replicas share one PostgreSQL database: each
/// service here is a replica (its own store, pool and memory) over the same schema. Bursts are
/// spread over them, and the work they buy is counted (`passwordChecks`), never timed.
final class ReplicaBudgetTests: IdentityTestCase {
    private func replicas(_ count: Int, _ adjust: @escaping (inout IdentitySettings) -> Void = { _ in }) throws -> [IdentityService] {
        try XCTSkipUnless(backend == .postgres, "replicas share one database only on PostgreSQL")
        return try (0..<count).map { _ in try makeService(adjust) }
    }

    func testSixtyGuessesFromOneAddressSpreadOverThreeReplicasRunAtMostOneBurstInHashes() throws {
        let replicas = try replicas(3) { $0.scrypt = ScryptParameters(logN: 12, r: 8, p: 1) }
        for index in 0..<10 { try registerUser("user\(index)", on: replicas[0]) }
        let caller = caller
        let reasons = Tally()
        DispatchQueue.concurrentPerform(iterations: 60) { index in
            do {
                _ = try replicas[index % 3].login(username: "user\(index)", password: "wrong guess \(index)", deviceID: "attacker", caller: caller)
                reasons.record("ok")
            } catch let error as IdentityError {
                reasons.record(error.rpcError.reasonText ?? "no reason")
            } catch {
                reasons.record("unexpected: \(error)")
            }
        }
        let burst = replicas[0].settings.clientBurst
        XCTAssertEqual(replicas.map(\.passwordChecks).reduce(0, +), burst, "one hash per token of the shared address budget: \(reasons.counts)")
        XCTAssertEqual(reasons.counts, ["invalid_credentials": burst, "rate_limited": 60 - burst])
    }

    func testChallengesByUsernameFromOneAddressShareOneBudgetAcrossReplicas() throws {
        let replicas = try replicas(2) { $0.challengeBurst = 4; $0.challengeRefillPerMinute = 1 }
        let caller = caller
        let issued = Tally()
        DispatchQueue.concurrentPerform(iterations: 12) { index in
            do {
                _ = try replicas[index % 2].challenge(deviceID: "iphone-1", token: nil, username: "alice", caller: caller)
                issued.record("ok")
            } catch let error as IdentityError {
                issued.record(error.rpcError.reasonText ?? "no reason")
            } catch {
                issued.record("unexpected: \(error)")
            }
        }
        XCTAssertEqual(issued.counts, ["ok": 4, "rate_limited": 8])
    }
}

/// The stored token bucket itself, on either backend.
final class StoredClientBudgetTests: IdentityTestCase {
    func testParallelReservationsThroughTwoHandlesNeverOverdrawAndRefundsGiveTokensBack() throws {
        let first = StoredClientBudget(store: try openStore(), name: "login", burst: 5, refillPerMinute: 6)
        let second = StoredClientBudget(store: try openStore(), name: "login", burst: 5, refillPerMinute: 6)
        let outcomes = Tally()
        DispatchQueue.concurrentPerform(iterations: 20) { index in
            do {
                let wait = try (index % 2 == 0 ? first : second).reserve(address: "198.51.100.1", now: 1000)
                outcomes.record(wait == nil ? "spent" : "wait \(wait!)")
            } catch {
                outcomes.record("unexpected: \(error)")
            }
        }
        XCTAssertEqual(outcomes.counts, ["spent": 5, "wait 10": 15])
        try first.refund(address: "198.51.100.1", now: 1000)
        XCTAssertNil(try second.reserve(address: "198.51.100.1", now: 1000), "a refunded token can be spent through any replica")
        XCTAssertEqual(try second.reserve(address: "198.51.100.1", now: 1004), 6, "refills at 6 a minute")
        XCTAssertNil(try first.reserve(address: "198.51.100.2", now: 1000), "other addresses have their own bucket")
        XCTAssertNil(try StoredClientBudget(store: try openStore(), name: "challenge", burst: 1, refillPerMinute: 1).reserve(address: "198.51.100.1", now: 1000),
                     "other budgets have their own buckets")
    }

    func testFullBucketsAreForgottenSoTheTableStaysBounded() throws {
        let store = try openStore()
        let budget = StoredClientBudget(store: store, name: "login", burst: 2, refillPerMinute: 60)
        for index in 0..<50 { XCTAssertNil(try budget.reserve(address: "10.0.0.\(index)", now: Double(index) * 10)) }
        let rows = try store.database.read { c in try c.queryOne("SELECT COUNT(*) AS n FROM client_budgets")?.int("n") }
        XCTAssertLessThanOrEqual(rows ?? 99, 2, "a bucket refills within 2 s here; older rows go when a new address comes")
    }
}
