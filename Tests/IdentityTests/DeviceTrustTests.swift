import Foundation
import Secrets
import TestSupport
import XCTest

@testable import Identity

/// A device is trusted by a secret it holds (the device token a login gave it, once that
/// login's session paid a factor), never by the `device_id` label the app chose: anyone can
/// copy a label.
final class DeviceTrustTests: IdentityTestCase {
    let stranger = Caller(client: "198.51.100.23")

    override func setUpWithError() throws {
        try super.setUpWithError()
        try registerUser()
    }

    /// The owner's phone: a login that paid its factor, and the token it keeps.
    private func ownersTrustedToken(device: String = "owner-phone") throws -> String {
        let first = try login(device: device)
        XCTAssertEqual(first.requiredFactors, ["sms"], "a device's first login owes a factor")
        _ = try service.elevate(sessionID: first.sessionID, factor: "sms", caller: caller)
        return try XCTUnwrap(first.deviceToken)
    }

    func testTheOwnersDeviceIDWithThePasswordButWithoutItsTokenOwesAFactorAndReadsNothing() throws {
        let token = try ownersTrustedToken()
        let copied = try login(device: "owner-phone", from: stranger)
        XCTAssertEqual(copied.aal, 1)
        XCTAssertEqual(copied.requiredFactors, ["sms"], "a bare device id is a label, not a proof")
        let owed = IdentityError.factorsOwed(["sms"])
        assertIdentityError(owed) { try service.keys(token: copied.session) }
        assertIdentityError(owed) { try service.activity(token: copied.session, limit: 10, before: nil) }
        assertIdentityError(owed) { try service.preferences(token: copied.session, smsVerification: nil, sitekey: nil, caller: stranger) }
        let (_, _, listed) = try service.sessions(token: copied.session)
        XCTAssertEqual(listed.map(\.sessionID), [copied.sessionID], "its own entry only")

        let owner = try login(device: "owner-phone", token: token)
        XCTAssertEqual(owner.requiredFactors, [], "the token that paid a factor keeps its device trusted")
        XCTAssertNoThrow(try service.keys(token: owner.session))
    }

    func testATokenOfAnotherDeviceOrAnotherUserTrustsNothing() throws {
        let token = try ownersTrustedToken()
        XCTAssertEqual(try login(device: "another-phone", token: token).requiredFactors, ["sms"])
        try registerUser("bob")
        XCTAssertEqual(try login("bob", device: "owner-phone", token: token).requiredFactors, ["sms"])
    }

    func testATokenIsTrustedOnlyOnceItsOwnSessionPaidAFactor() throws {
        let first = try login(device: "owner-phone")
        let untrusted = try XCTUnwrap(first.deviceToken)
        let second = try login(device: "owner-phone", token: untrusted)
        XCTAssertEqual(second.requiredFactors, ["sms"], "a token whose login never paid a factor is no proof of a trusted device")
        _ = try service.elevate(sessionID: second.sessionID, factor: "sms", caller: caller)
        XCTAssertEqual(try login(device: "owner-phone", token: second.deviceToken).requiredFactors, [], "the rotated token carries the trust")
    }

    func testTrustEndsWithTheTokensLifetime() throws {
        let token = try ownersTrustedToken()
        clock.advance(seconds: service.settings.deviceTokenLifetimeSeconds)
        XCTAssertEqual(try login(device: "owner-phone", token: token).requiredFactors, ["sms"], "an expired token costs one factor, never the account")
    }

    /// A stranger with the password logs in on the owner's device id without a token: that
    /// login adds a token of its own and voids none, so once the stranger locks the account the
    /// owner's phone still signs in on its own token's budget, still trusted.
    func testATokenlessLoginNeverReplacesTheOwnersToken() throws {
        let token = try ownersTrustedToken()
        _ = try login(device: "owner-phone", from: stranger)
        for guess in 0..<service.settings.accountThrottle.freeFailures {
            assertReason(.invalidCredentials) { try login(password: "guess \(guess)", device: "owner-phone", from: stranger) }
        }
        assertReason(.locked) { try login(device: "owner-phone", from: stranger) }
        let owner = try login(device: "owner-phone", token: token)
        XCTAssertEqual(owner.requiredFactors, [])
        let tokens = try service.store.database.read { c in
            try c.queryOne("SELECT COUNT(*) AS n FROM device_tokens WHERE device_id = 'owner-phone'")?.int("n")
        }
        XCTAssertEqual(tokens, 2, "the owner's rotated token and the stranger's, side by side")
    }

    /// Past the per-user cap, untrusted tokens go before trusted ones: a flood of token-less
    /// logins cannot push the owner's trusted token out.
    func testTheCapEvictsUntrustedTokensFirst() throws {
        service = try makeService { $0.maxDeviceTokensPerUser = 3 }
        let token = try ownersTrustedToken()
        for index in 0..<10 { _ = try login(device: "flood-\(index)", from: stranger) }
        XCTAssertEqual(try login(device: "owner-phone", token: token).requiredFactors, [])
    }

    /// A `user_presence` key cannot lift a session to aal 2, so it is never listed as a factor
    /// to pay; SMS, which can, is.
    func testAUserPresenceKeyIsNeverListedAsAFactor() throws {
        let phone = FakeiPhone(deviceID: "owner-phone")
        let token = try ownersTrustedToken()
        let session = try login(device: "owner-phone", token: token)
        _ = try service.elevate(sessionID: session.sessionID, factor: "sms", caller: caller)
        _ = try service.enrollKey(token: session.session, deviceID: "owner-phone", publicKey: phone.publicKeyBase64, protection: "user_presence", caller: caller)
        XCTAssertEqual(try login(device: "owner-phone").requiredFactors, ["sms"], "an untrusted device with a user_presence key pays by SMS")
        XCTAssertEqual(try login(device: "owner-phone", token: session.deviceToken).requiredFactors, [], "a trusted one owes nothing")
        _ = try service.enrollKey(token: session.session, deviceID: "owner-phone", publicKey: phone.publicKeyBase64, protection: "biometry", caller: caller)
        XCTAssertEqual(try login(device: "owner-phone").requiredFactors, ["device_key", "sms"], "a biometry key pays, offered first")
    }
}
