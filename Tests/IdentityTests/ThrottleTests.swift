import TestSupport
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

    func testOneFailureIsForgivenPerDecayPeriod() {
        let policy = AccountThrottlePolicy(decaySeconds: 300)
        XCTAssertEqual(policy.decayed(stored: 7, lastFailureAt: 1000, now: 1299), 7)
        XCTAssertEqual(policy.decayed(stored: 7, lastFailureAt: 1000, now: 1300), 6)
        XCTAssertEqual(policy.decayed(stored: 7, lastFailureAt: 1000, now: 1000 + 300 * 100), 0)
    }

    func testAFailureRightAfterTheLongestLockStartsAShorterOne() {
        let policy = AccountThrottlePolicy()
        let atMaximum = FailureCount(failures: 10, consecutive: 10, lastFailureAt: 0, lockedUntil: policy.maximumDelaySeconds)
        XCTAssertEqual(policy.delay(afterFailures: 10), policy.maximumDelaySeconds)
        guard case .reserved(let next) = policy.reserve(atMaximum, now: policy.maximumDelaySeconds) else { return XCTFail("the lock ended") }
        XCTAssertEqual(next.failures, 8, "900 s forgave three failures")
        XCTAssertEqual(next.lockedUntil - policy.maximumDelaySeconds, 240)
        XCTAssertEqual(next.consecutive, 11, "the consecutive count never decays")
    }

    func testCountsStopAtTheFirstThatLocksForTheMaximum() {
        let policy = AccountThrottlePolicy()
        let many = FailureCount(failures: 50, consecutive: 50, lastFailureAt: 0, lockedUntil: 0)
        guard case .reserved(let next) = policy.reserve(many, now: 0) else { return XCTFail("not locked") }
        XCTAssertEqual(next.failures, 10)
    }

    func testAReservationIsRefusedWhileLockedAndForGoodAtTheConsecutiveLimit() {
        let policy = AccountThrottlePolicy(maximumConsecutiveFailures: 100)
        XCTAssertEqual(policy.reserve(FailureCount(failures: 5, consecutive: 5, lastFailureAt: 0, lockedUntil: 30), now: 10), .locked(retryAfterSeconds: 20))
        XCTAssertEqual(policy.reserve(FailureCount(failures: 0, consecutive: 100, lastFailureAt: 0, lockedUntil: 0), now: 1_000_000), .exhausted)
    }

    func testClientBudgetRefillsOverTimeAndRefundsSuccesses() {
        let budget = ClientLoginBudget(burst: 3, refillPerMinute: 6)
        for _ in 0..<3 { XCTAssertNil(budget.reserve(address: "198.51.100.1", now: 0)) }
        XCTAssertEqual(budget.reserve(address: "198.51.100.1", now: 0), 10)
        XCTAssertEqual(budget.reserve(address: "198.51.100.1", now: 4), 6)
        XCTAssertNil(budget.reserve(address: "198.51.100.1", now: 10))
        budget.refund(address: "198.51.100.1", now: 10)
        XCTAssertNil(budget.reserve(address: "198.51.100.1", now: 10), "a refunded token can be spent again")
        XCTAssertNil(budget.reserve(address: "198.51.100.2", now: 0), "other addresses have their own budget")
    }

    func testClientBudgetMemoryIsBounded() {
        let budget = ClientLoginBudget(burst: 2, refillPerMinute: 1, maximumAddresses: 10)
        for index in 0..<100 { _ = budget.reserve(address: "10.0.0.\(index)", now: Double(index)) }
        XCTAssertLessThanOrEqual(budget.trackedAddresses, 10)
    }
}

final class LoginThrottleTests: IdentityTestCase {
    func testAccountLocksAfterFreeFailuresWithIncreasingDelayThenUnlocks() throws {
        try registerUser()
        for _ in 0..<4 {
            assertReason(.invalidCredentials) { try login(password: "wrong password 1") }
        }
        assertReason(.invalidCredentials) { try login(password: "wrong password 1") }  // 5th: lock starts
        let locked = assertReason(.locked) { try login() }  // even the right password waits
        XCTAssertEqual(locked?.data?["retry_after"], 30)
        clock.advance(seconds: 30)
        assertReason(.invalidCredentials) { try login(password: "wrong password 1") }  // 6th: 60 s
        assertIdentityError(.locked(retryAfterSeconds: 60)) { try login() }
        clock.advance(seconds: 60)
        XCTAssertEqual(try login().aal, 1, "a lock always ends")
        assertReason(.invalidCredentials) { try login(password: "wrong password 1") }
        XCTAssertNoThrow(try login(), "a success forgets earlier failures")
    }

    func testUnknownUsersAreThrottledTheSameWay() throws {
        for _ in 0..<5 { assertReason(.invalidCredentials) { try login("ghost", password: "whatever it is") } }
        assertIdentityError(.locked(retryAfterSeconds: 30)) { try login("ghost", password: "whatever it is") }
    }

    func testClientAddressBudget() throws {
        service = try makeService { $0.clientBurst = 3; $0.clientRefillPerMinute = 6 }
        try registerUser()
        for name in ["user1", "user2", "user3"] { assertReason(.invalidCredentials) { try login(name, password: "guess guess") } }
        let limited = assertReason(.rateLimited) { try login() }
        XCTAssertEqual(limited?.data?["retry_after"], 10)
        XCTAssertNoThrow(try service.login(username: "alice", password: Self.password, deviceID: "d", caller: Caller(client: "198.51.100.9")))
        clock.advance(seconds: 10)
        XCTAssertNoThrow(try login())
    }

    func testThrottledAttemptsAreAudited() throws {
        try registerUser()
        for _ in 0..<5 { _ = try? login(password: "wrong password 1") }
        _ = try? login()
        clock.advance(seconds: 30)
        let userID = try service.introspect(token: try login().session).userID
        let events = try service.store.events(userID: userID, limit: 100, before: nil).map { "\($0.event):\($0.outcome)" }
        XCTAssertTrue(events.contains("login.throttled:locked"))
        XCTAssertEqual(events.filter { $0 == "login.failed:invalid_credentials" }.count, 5)
    }
}
