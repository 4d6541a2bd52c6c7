import Foundation
import TestSupport
import XCTest

@testable import Identity

/// What the operator's tool may do to one user: unlock ends the lock and the consecutive
/// streak on every budget of the account, revocations touch only that user's sessions and keys,
/// and each change leaves an `operator.*` event.
final class OperatorActionsTests: IdentityTestCase {
    private func aliceLogin(password: String = IdentityTestCase.password, device: String = "iphone-1", token: String? = nil) throws -> LoginResult {
        try service.login(username: "alice", password: password, deviceID: device, deviceToken: token, caller: caller)
    }

    private func events(_ userID: String) throws -> [String] { try service.operatorActivity(userID: userID, limit: 100).map(\.event) }

    /// Past the consecutive-failure limit no password is checked for clients without a device
    /// token, not even a month later; an unlock lets the owner in again on a new device.
    func testUnlockEndsTheConsecutiveStreakThatNeverDecays() throws {
        let userID = try registerUser()
        let policy = service.settings.accountThrottle
        for index in 0..<(policy.maximumConsecutiveFailures + 5) {
            clock.advance(seconds: policy.maximumDelaySeconds)
            _ = try? aliceLogin(password: "guess \(index)", device: "attacker")
        }
        clock.advance(seconds: 30 * 86_400)
        assertReason(.locked) { try aliceLogin(device: "new-phone") }

        let cleared = try service.operatorUnlock(userID: userID, caller: caller)
        XCTAssertEqual(cleared.consecutiveFailures, policy.maximumConsecutiveFailures)
        XCTAssertNoThrow(try aliceLogin(device: "new-phone"))
        XCTAssertEqual(try events(userID).filter { $0 == "operator.unlock" }.count, 1)
    }

    func testUnlockForgivesTheFailuresOfTheUsersDeviceTokens() throws {
        let userID = try registerUser()
        let token = try XCTUnwrap(try aliceLogin().deviceToken)
        for index in 0..<service.settings.deviceTokenThrottle.freeFailures {
            assertReason(.invalidCredentials) { try aliceLogin(password: "guess \(index)", token: token) }
        }
        assertReason(.locked) { try aliceLogin(token: token) }
        _ = try service.operatorUnlock(userID: userID, caller: caller)
        XCTAssertNotNil(try aliceLogin(token: token).deviceToken, "the token's own lock is gone too")
    }

    func testRevocationsTouchOnlyTheNamedUser() throws {
        let aliceID = try registerUser()
        let bobID = try registerUser("bob")
        let aliceSession = try aliceLogin().sessionID
        assertReason(.notFound) { try service.operatorRevokeSession(userID: bobID, sessionID: aliceSession, caller: caller) }
        XCTAssertEqual(try service.operatorSessions(userID: aliceID).map(\.sessionID), [aliceSession])
        XCTAssertFalse(try events(bobID).contains("operator.revoke_session"), "nothing happened, nothing recorded")

        try service.operatorRevokeSession(userID: aliceID, sessionID: aliceSession, caller: caller)
        XCTAssertEqual(try service.operatorSessions(userID: aliceID), [])
        XCTAssertEqual(try service.store.events(userID: aliceID, limit: 1, before: nil).first?.deviceID, "iphone-1")
        XCTAssertEqual(try service.operatorRevokeAllSessions(userID: aliceID, caller: caller), 0)
        XCTAssertEqual(try events(aliceID).filter { $0 == "operator.revoke_session" }.count, 2, "an --all that found nothing is still recorded")
        assertReason(.notFound) { try service.operatorRevokeKey(userID: aliceID, keyID: "key_unknown", caller: caller) }
        assertReason(.notFound) { _ = try service.operatorUnlock(userID: "usr_unknown", caller: caller) }
    }
}
