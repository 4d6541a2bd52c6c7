import XCTest

@testable import Identity

final class ThrottleMathTests: XCTestCase {
    func testDelayDoublesAfterTheFreeFailuresAndIsCapped() {
        let policy = AccountThrottlePolicy(freeFailures: 5, baseDelaySeconds: 30, maximumDelaySeconds: 900)
        XCTAssertNil(policy.delay(afterFailures: 4))
        XCTAssertEqual(policy.delay(afterFailures: 5), 30)
        XCTAssertEqual(policy.delay(afterFailures: 6), 60)
        XCTAssertEqual(policy.delay(afterFailures: 9), 480)
        XCTAssertEqual(policy.delay(afterFailures: 10), 900)
        XCTAssertEqual(policy.delay(afterFailures: 1_000_000), 900)
    }

    func testFailuresAreForgottenAfterTheWindow() {
        let policy = AccountThrottlePolicy(failureWindowSeconds: 3600)
        XCTAssertEqual(policy.effectiveFailures(stored: 7, lastFailureAt: 1000, now: 4599), 7)
        XCTAssertEqual(policy.effectiveFailures(stored: 7, lastFailureAt: 1000, now: 4600), 0)
    }

    func testClientBudgetRefillsOverTime() {
        let budget = ClientLoginBudget(burst: 3, refillPerMinute: 6)
        for _ in 0..<3 {
            XCTAssertNil(budget.retryAfter(address: "198.51.100.1", now: 0))
            budget.charge(address: "198.51.100.1", now: 0)
        }
        XCTAssertEqual(budget.retryAfter(address: "198.51.100.1", now: 0), 10)
        XCTAssertEqual(budget.retryAfter(address: "198.51.100.1", now: 4), 6)
        XCTAssertNil(budget.retryAfter(address: "198.51.100.1", now: 10))
        XCTAssertNil(budget.retryAfter(address: "198.51.100.2", now: 0), "other addresses have their own budget")
    }

    func testClientBudgetMemoryIsBounded() {
        let budget = ClientLoginBudget(burst: 2, refillPerMinute: 1, maximumAddresses: 10)
        for index in 0..<100 { budget.charge(address: "10.0.0.\(index)", now: Double(index)) }
        XCTAssertLessThanOrEqual(budget.trackedAddresses, 10)
    }
}

final class LoginThrottleTests: IdentityTestCase {
    func testAccountLocksAfterFreeFailuresWithIncreasingDelayThenUnlocks() throws {
        try registerUser()
        for _ in 0..<4 {
            assertReason("invalid_credentials") { try login(password: "wrong password 1") }
        }
        assertReason("invalid_credentials") { try login(password: "wrong password 1") }  // 5th: lock starts
        let locked = assertReason("locked") { try login() }  // even the right password waits
        XCTAssertEqual(locked?.data?["retry_after"], 30)
        clock.advance(30)
        assertReason("invalid_credentials") { try login(password: "wrong password 1") }  // 6th: 60 s
        assertIdentityError(.locked(retryAfterSeconds: 60)) { try login() }
        clock.advance(60)
        XCTAssertEqual(try login().aal, 1, "a lock always ends")
        assertReason("invalid_credentials") { try login(password: "wrong password 1") }
        XCTAssertNoThrow(try login(), "a success forgets earlier failures")
    }

    func testUnknownUsersAreThrottledTheSameWay() throws {
        for _ in 0..<5 { assertReason("invalid_credentials") { try login("ghost", password: "whatever it is") } }
        assertIdentityError(.locked(retryAfterSeconds: 30)) { try login("ghost", password: "whatever it is") }
    }

    func testClientAddressBudget() throws {
        service = try makeService { $0.clientBurst = 3; $0.clientRefillPerMinute = 6 }
        try registerUser()
        for name in ["user1", "user2", "user3"] { assertReason("invalid_credentials") { try login(name, password: "guess guess") } }
        let limited = assertReason("rate_limited") { try login() }
        XCTAssertEqual(limited?.data?["retry_after"], 10)
        XCTAssertNoThrow(try service.login(username: "alice", password: Self.password, deviceID: "d", caller: Caller(client: "198.51.100.9")))
        clock.advance(10)
        XCTAssertNoThrow(try login())
    }

    func testThrottledAttemptsAreAudited() throws {
        try registerUser()
        for _ in 0..<5 { _ = try? login(password: "wrong password 1") }
        _ = try? login()
        clock.advance(30)
        let userID = try service.introspect(token: try login().session).userID
        let events = try service.store.events(userID: userID, limit: 100, before: nil).map { "\($0.event):\($0.outcome)" }
        XCTAssertTrue(events.contains("login.throttled:locked"))
        XCTAssertEqual(events.filter { $0 == "login.failed:invalid_credentials" }.count, 5)
    }
}
