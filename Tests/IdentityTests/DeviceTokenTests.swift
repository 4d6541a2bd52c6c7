import Foundation
import Secrets
import TestSupport
import XCTest

@testable import Identity

/// OWASP device cookies: a lock stops the guesser, not the owner. A successful login answers a
/// `device_token`; a later login presenting it for the same user and device is judged on that
/// token's own budget, never on failures of clients without one.
final class DeviceTokenTests: IdentityTestCase {
    /// The `retry_after` of a login without a token right now (nil: not locked). Costs nothing
    /// while locked; when not locked it is one more wrong guess.
    private func currentLock(_ username: String = "alice") -> Int64? {
        do {
            _ = try login(username, password: "probe, not the password", token: nil)
            XCTFail("a probe must not log in")
        } catch IdentityError.locked(let seconds) {
            return seconds
        } catch {}
        return nil
    }

    func testASuccessfulLoginAnswersAnOpaqueDeviceTokenStoredOnlyAsItsHash() throws {
        try registerUser()
        let token = try XCTUnwrap(try login(token: nil).deviceToken)
        XCTAssertTrue(OpaqueToken.isWellFormed(token, prefix: "lkd_"), token)
        let stored = try service.store.database.read { c in
            try c.query("SELECT token_hash FROM device_tokens").map { try $0.blob("token_hash") }
        }
        XCTAssertEqual(stored, [OpaqueToken.hash(token)])
        XCTAssertNotEqual(try login(token: token).deviceToken, token, "each success rotates the device's token")
    }

    /// The attack from the issue: one wrong guess just after each lock ends keeps an account
    /// locked for clients without a token; the owner's phone, presenting its token, logs in
    /// with the right password throughout, and locks decay instead of restarting at the maximum.
    func testAGuesserCannotKeepTheOwnerOutAndLocksDecay() throws {
        try registerUser()
        var ownerToken = try XCTUnwrap(try login(token: nil).deviceToken)
        for index in 0..<5 { assertReason(.invalidCredentials) { try login(password: "guess \(index)", device: "attacker", token: nil) } }
        let policy = service.settings.accountThrottle
        var locks: [Int64] = []
        for cycle in 0..<40 {
            let lock = try XCTUnwrap(currentLock(), "cycle \(cycle): the guesser is locked")
            locks.append(lock)
            ownerToken = try XCTUnwrap(try login(token: ownerToken).deviceToken, "cycle \(cycle): the owner logs in while locked")
            clock.advance(seconds: lock)
            assertReason(.invalidCredentials) { try login(password: "guess after lock \(cycle)", device: "attacker", token: nil) }
            ownerToken = try XCTUnwrap(try login(token: ownerToken).deviceToken, "cycle \(cycle): the owner logs in just after a guess")
        }
        XCTAssertEqual(Array(locks.prefix(4)), [30, 60, 120, 240], "the lock grows while guesses come as soon as allowed")
        XCTAssertFalse(locks.contains(policy.maximumDelaySeconds), "one failure after a lock never restarts it at the maximum: \(locks)")
    }

    func testAWrongOrForeignTokenCountsAsNone() throws {
        try registerUser()
        try registerUser("bob")
        let aliceToken = try XCTUnwrap(try login(token: nil).deviceToken)
        let bobToken = try XCTUnwrap(try login("bob", token: nil).deviceToken)
        for index in 0..<5 { _ = try? login(password: "guess \(index)", device: "attacker", token: nil) }
        XCTAssertNotNil(currentLock())
        for (name, token, device) in [
            ("random", OpaqueToken.make(prefix: "lkd_"), "iphone-1"), ("malformed", "lkd_x", "iphone-1"),
            ("another user's", bobToken, "iphone-1"), ("another device's", aliceToken, "ipad-2"),
        ] {
            let answer = assertReason(.locked) { try login(device: device, token: token) }
            XCTAssertNotNil(answer, "\(name) token")
        }
        XCTAssertNoThrow(try login(token: aliceToken), "the owner's own token still works")
    }

    /// A token's budget is its own: guesses with a stolen token lock that token, not the
    /// account; once it has failed `maximumConsecutiveFailures` times it is revoked.
    func testGuessesWithAValidTokenSpendOnlyThatTokensBudget() throws {
        try registerUser()
        let stolen = try XCTUnwrap(try login(token: nil).deviceToken)
        let tokenPolicy = service.settings.deviceTokenThrottle
        for index in 0..<tokenPolicy.freeFailures { assertReason(.invalidCredentials) { try login(password: "guess \(index)", token: stolen) } }
        assertReason(.locked) { try login(token: stolen) }
        XCTAssertNil(currentLock(), "clients without a token are not locked by the token's failures")
        for index in 0..<(tokenPolicy.maximumConsecutiveFailures - tokenPolicy.freeFailures) {
            clock.advance(seconds: tokenPolicy.maximumDelaySeconds)
            assertReason(.invalidCredentials) { try login(password: "later guess \(index)", token: stolen) }
        }
        clock.advance(seconds: tokenPolicy.maximumDelaySeconds)
        let before = service.passwordChecks
        XCTAssertNotNil(try login(token: stolen).deviceToken, "a revoked token counts as none: judged like any client")
        XCTAssertEqual(service.passwordChecks - before, 1)
        XCTAssertEqual(try service.store.database.read { c in try c.queryOne("SELECT COUNT(*) AS n FROM device_tokens")?.int("n") }, 1)
    }

    /// NIST SP 800-63B 5.2.2: at most 100 consecutive failed attempts per account. Clients
    /// without a token stop there for good (no hash runs) until the owner succeeds elsewhere.
    func testClientsWithoutATokenStopAfterTheConsecutiveFailureLimit() throws {
        try registerUser()
        let ownerToken = try XCTUnwrap(try login(token: nil).deviceToken)
        let policy = service.settings.accountThrottle
        XCTAssertLessThanOrEqual(policy.maximumConsecutiveFailures, 100)
        let before = service.passwordChecks
        for index in 0..<(policy.maximumConsecutiveFailures + 20) {
            if let lock = currentLock() { clock.advance(seconds: lock) }
            _ = try? login(password: "guess \(index)", device: "attacker", token: nil)
        }
        XCTAssertEqual(service.passwordChecks - before, policy.maximumConsecutiveFailures)
        clock.advance(seconds: 30 * 86_400)
        assertReason(.locked) { try login(device: "new-phone", token: nil) }  // not even the right password, a month later
        XCTAssertNoThrow(try login(token: ownerToken), "the owner's device is not stopped")
        XCTAssertNoThrow(try login(device: "new-phone", token: nil), "the owner's success ends the streak")
    }

    func testAPasswordChangeEndsTheLockForClientsWithoutAToken() throws {
        let userID = try registerUser()
        for index in 0..<5 { _ = try? login(password: "guess \(index)", device: "attacker", token: nil) }
        XCTAssertNotNil(currentLock())
        try service.setPassword(userID: userID, password: "a brand new phrase", caller: caller)
        XCTAssertNoThrow(try login(password: "a brand new phrase", token: nil))
    }
}
