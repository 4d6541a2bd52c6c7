import Foundation
import LineProtocol
import TestSupport
import XCTest

@testable import Identity

/// A password alone never acts like two factors (Ory Kratos' highest_available): a session that
/// owes factors may only complete them, read itself and log out; sensitive changes need aal 2
/// reached within the step-up window, measured on the test's clock.
final class SessionAssuranceTests: IdentityTestCase {
    let device = FakeiPhone(deviceID: "iphone-1")

    override func setUpWithError() throws {
        try super.setUpWithError()
        try registerUser()
    }

    func testANewDeviceOwesSMSAndMayOnlyCompleteItReadItselfAndLogOut() throws {
        let strong = try elevatedLogin(device: "owner-phone")
        let owing = try login(device: "thief-phone")
        XCTAssertEqual(owing.requiredFactors, ["sms"])
        let record = try service.introspect(token: owing.session)
        XCTAssertEqual(try service.assurance(of: record), SessionAssurance(requiredFactors: ["sms"], stepUpUntil: nil))

        let owed = IdentityError.factorsOwed(["sms"])
        assertIdentityError(owed) { try service.keys(token: owing.session) }
        assertIdentityError(owed) { try service.activity(token: owing.session, limit: 10, before: nil) }
        assertIdentityError(owed) { try service.preferences(token: owing.session, smsVerification: nil, sitekey: nil, caller: caller) }
        assertIdentityError(owed) { try service.revoke(token: owing.session, sessionID: strong.sessionID, caller: caller) }
        assertIdentityError(owed) { try service.revokeKey(token: owing.session, keyID: "key_x", caller: caller) }
        assertIdentityError(owed) {
            try service.enrollKey(token: owing.session, deviceID: "thief-phone", publicKey: device.publicKeyBase64, protection: "biometry", caller: caller)
        }
        let (_, assurance, listed) = try service.sessions(token: owing.session)
        XCTAssertEqual(listed.map(\.sessionID), [owing.sessionID], "its own entry, never the owner's")
        XCTAssertEqual(assurance.requiredFactors, ["sms"])
        XCTAssertNoThrow(try service.challenge(deviceID: "thief-phone", token: owing.session, username: nil))
        XCTAssertNoThrow(try service.introspect(token: strong.session), "the owner's session survived")
        try service.logout(token: owing.session, caller: caller)
    }

    func testSensitiveChangesNeedAStepUpWithinTheWindow() throws {
        let session = try elevatedLogin(device: device.deviceID)
        let passedAt = clock.nowSeconds
        XCTAssertEqual(try service.assurance(of: service.introspect(token: session.session)).stepUpUntil, passedAt + 600)
        let keyID = try service.enrollKey(token: session.session, deviceID: device.deviceID, publicKey: device.publicKeyBase64, protection: "biometry", caller: caller)
        let other = try elevatedLogin(device: "ipad-1")
        clock.advance(seconds: 600)
        let stale = IdentityError.recentStepUpRequired(windowSeconds: 600)
        assertIdentityError(stale) { try service.revokeKey(token: session.session, keyID: keyID, caller: caller) }
        assertIdentityError(stale) { try service.revoke(token: session.session, sessionID: other.sessionID, caller: caller) }
        assertIdentityError(stale) {
            try service.enrollKey(token: session.session, deviceID: device.deviceID, publicKey: device.publicKeyBase64, protection: "biometry", caller: caller)
        }
        XCTAssertEqual(try service.keys(token: session.session).map(\.keyID), [keyID], "reading needs no fresh factor")
        // A fresh factor (the biometric key here) opens the window again.
        let challenge = try service.challenge(deviceID: device.deviceID, token: session.session, username: nil).challenge
        XCTAssertEqual(try service.verifyKey(token: session.session, deviceID: device.deviceID, challenge: challenge, signature: device.sign(challenge), caller: caller), 2)
        XCTAssertNoThrow(try service.revoke(token: session.session, sessionID: other.sessionID, caller: caller))
        XCTAssertNoThrow(try service.revokeKey(token: session.session, keyID: keyID, caller: caller))
    }

    func testTheWindowIsConfigurable() throws {
        service = try makeService { $0.stepUpWindowSeconds = 30 }
        let session = try elevatedLogin()
        clock.advance(seconds: 30)
        assertIdentityError(.recentStepUpRequired(windowSeconds: 30)) {
            try service.enrollKey(token: session.session, deviceID: "iphone-1", publicKey: device.publicKeyBase64, protection: "biometry", caller: caller)
        }
        let error = IdentityError.recentStepUpRequired(windowSeconds: 30).rpcError
        XCTAssertEqual(error.reason, .stepUpRequired)
        XCTAssertEqual(error.data?["detail"], "recent_step_up")
    }

    func testTheResetCleanUpEndsEveryKeyAndTrust() throws {
        let session = try elevatedLogin(device: device.deviceID)
        _ = try service.enrollKey(token: session.session, deviceID: device.deviceID, publicKey: device.publicKeyBase64, protection: "biometry", caller: caller)
        XCTAssertEqual(try appLogin(device: device.deviceID).requiredFactors, ["device_key"])
        let userID = try service.findByEmail("alice@example.com")
        let cleanup = try service.cleanUpAfterReset(userID: userID, caller: caller)
        XCTAssertEqual(cleanup.keys, 1)
        XCTAssertEqual(cleanup.deviceTokens, 1, "the app's token, rotated at each login")
        XCTAssertEqual(try appLogin(device: device.deviceID).requiredFactors, ["sms"])
        let challenge = try service.challenge(deviceID: device.deviceID, token: nil, username: "alice").challenge
        assertReason(.invalidCredentials) {
            try service.keyLogin(username: "alice", deviceID: device.deviceID, challenge: challenge, signature: device.sign(challenge), caller: caller)
        }
        assertReason(.notFound) { try service.cleanUpAfterReset(userID: "usr_nobody", caller: caller) }
    }
}
