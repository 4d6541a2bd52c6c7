import Foundation
import Secrets
import TestSupport
import XCTest

@testable import Identity

/// Parallel bursts of password guesses: every attempt is reserved (counted) before its scrypt
/// runs, so a burst never buys more password checks than the limits allow. Work is counted
/// (`passwordVerifications`), never timed.
final class LoginBurstTests: IdentityTestCase {
    /// The outcome of each of `count` logins run at once, by wire reason ("ok" for a session).
    private func burst(_ count: Int, _ attempt: @escaping @Sendable (Int) throws -> LoginResult) -> [String: Int] {
        let reasons = Tally()
        DispatchQueue.concurrentPerform(iterations: count) { index in
            do {
                _ = try attempt(index)
                reasons.record("ok")
            } catch let error as IdentityError {
                reasons.record(error.rpcError.reasonText ?? "no reason")
            } catch {
                reasons.record("unexpected: \(error)")
            }
        }
        return reasons.counts
    }

    func testThirtyParallelWrongGuessesForOneAccountRunAtMostTheFreeFailuresInHashes() throws {
        // Costlier scrypt widens the window between the throttle check and the recorded failure.
        service = try makeService { $0.scrypt = ScryptParameters(logN: 12, r: 8, p: 1); $0.clientBurst = 1000 }
        try registerUser()
        let service = service!
        let caller = caller
        let before = service.passwordChecks
        let reasons = burst(30) { index in
            try service.login(username: "alice", password: "wrong guess \(index)", deviceID: "attacker", caller: caller)
        }
        let free = service.settings.accountThrottle.freeFailures
        XCTAssertEqual(service.passwordChecks - before, free, "one hash per free failure, none after: \(reasons)")
        XCTAssertEqual(reasons, ["invalid_credentials": free, "locked": 30 - free])
    }

    func testSixtyParallelGuessesAtSixtyNamesFromOneAddressRunAtMostTheAddressBurstInHashes() throws {
        service = try makeService { $0.scrypt = ScryptParameters(logN: 12, r: 8, p: 1) }
        for index in 0..<10 { try registerUser("user\(index)") }  // known and unknown names alike
        let service = service!
        let caller = caller
        let before = service.passwordChecks
        let reasons = burst(60) { index in
            try service.login(username: "user\(index)", password: "wrong guess \(index)", deviceID: "attacker", caller: caller)
        }
        let burstSize = service.settings.clientBurst
        XCTAssertEqual(service.passwordChecks - before, burstSize, "one hash per token of the address budget: \(reasons)")
        XCTAssertEqual(reasons, ["invalid_credentials": burstSize, "rate_limited": 60 - burstSize])
    }

    func testThirtyParallelWrongGuessesWithOneDeviceTokenRunAtMostItsFreeFailuresInHashes() throws {
        service = try makeService { $0.scrypt = ScryptParameters(logN: 12, r: 8, p: 1) }
        try registerUser()
        let token = try XCTUnwrap(try login().deviceToken)
        let service = service!
        let caller = caller
        let before = service.passwordChecks
        let reasons = burst(30) { index in
            try service.login(username: "alice", password: "wrong guess \(index)", deviceID: "iphone-1", deviceToken: token, caller: caller)
        }
        let free = service.settings.deviceTokenThrottle.freeFailures
        XCTAssertEqual(service.passwordChecks - before, free, "\(reasons)")
        XCTAssertEqual(reasons, ["invalid_credentials": free, "locked": 30 - free])
    }

    func testParallelRightPasswordsFromOneAddressAreNotChargedToItsBudget() throws {
        service = try makeService { $0.clientBurst = 3 }
        try registerUser()
        let service = service!
        let caller = caller
        let reasons = burst(12) { _ in try service.login(username: "alice", password: Self.password, deviceID: "iphone-1", caller: caller) }
        XCTAssertEqual(reasons, ["ok": 12], "a success gives its reserved token back")
    }
}
