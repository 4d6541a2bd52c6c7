import Foundation
import Secrets
import TestSupport
import XCTest

@testable import Identity

/// Plays the iPhone: a P-256 key exported as iOS does (X9.63, standard base64) and DER signatures.
struct FakeiPhone {
    let deviceID: String
    let key = P256PrivateKey()

    var publicKeyBase64: String { Data(key.publicKey.x963).base64EncodedString() }

    func sign(_ challenge: String) -> String {
        Data(key.signature(for: Base64URL.decode(challenge)!)).base64EncodedString()
    }
}

final class DeviceKeyTests: IdentityTestCase {
    let phone = FakeiPhone(deviceID: "iphone-1")

    override func setUpWithError() throws {
        try super.setUpWithError()
        try registerUser()
    }

    private func enroll(_ protection: String = "biometry", device: FakeiPhone? = nil) throws -> (LoginResult, String) {
        let device = device ?? phone
        let session = try elevatedLogin(device: device.deviceID)
        let keyID = try service.enrollKey(token: session.session, deviceID: device.deviceID, publicKey: device.publicKeyBase64, protection: protection, caller: caller)
        return (session, keyID)
    }

    private func keyLogin(_ device: FakeiPhone? = nil, username: String = "alice") throws -> LoginResult {
        let device = device ?? phone
        let challenge = try service.challenge(deviceID: device.deviceID, token: nil, username: username).challenge
        return try service.keyLogin(username: username, deviceID: device.deviceID, challenge: challenge, signature: device.sign(challenge), caller: caller)
    }

    func testChallengeIs32RandomBytesValidForTwoMinutes() throws {
        let first = try service.challenge(deviceID: "iphone-1", token: nil, username: "alice")
        let second = try service.challenge(deviceID: "iphone-1", token: nil, username: "alice")
        XCTAssertEqual(Base64URL.decode(first.challenge)?.count, 32)
        XCTAssertFalse(first.challenge.contains("="))
        XCTAssertNotEqual(first.challenge, second.challenge)
        XCTAssertEqual(first.expiresAt, clock.nowSeconds + 120)
        assertReason(.invalidParams) { try service.challenge(deviceID: "iphone-1", token: nil, username: nil) }
        assertReason(.unauthenticated) { try service.challenge(deviceID: "iphone-1", token: "lks_bad", username: nil) }
    }

    func testChallengesByUsernameAreLimitedPerClientAddress() throws {
        service = try makeService { $0.challengeBurst = 2; $0.challengeRefillPerMinute = 60 }
        for _ in 0..<2 { XCTAssertNoThrow(try service.challenge(deviceID: "d", token: nil, username: "alice", caller: caller)) }
        let limited = assertReason(.rateLimited) { try service.challenge(deviceID: "d", token: nil, username: "nobody", caller: caller) }
        XCTAssertEqual(limited?.data?["retry_after"], 1)
        XCTAssertNoThrow(try service.challenge(deviceID: "d", token: nil, username: "alice", caller: Caller(client: "198.51.100.4")))
        let session = try login().session
        XCTAssertNoThrow(try service.challenge(deviceID: "iphone-1", token: session, username: nil, caller: caller), "sessions are not limited")
        clock.advance(seconds: 1)
        XCTAssertNoThrow(try service.challenge(deviceID: "d", token: nil, username: "alice", caller: caller))
    }

    func testEnrollNeedsAAL2AndAValidKey() throws {
        let weak = try login()
        assertIdentityError(.factorsOwed(["sms"])) {
            try service.enrollKey(token: weak.session, deviceID: "iphone-1", publicKey: phone.publicKeyBase64, protection: "biometry", caller: caller)
        }
        let strong = try elevatedLogin()
        var notOnCurve = phone.key.publicKey.x963
        notOnCurve[64] ^= 1
        var compressed = Array(phone.key.publicKey.x963.prefix(33))
        compressed[0] = 0x02
        let badKeys = [Data(notOnCurve).base64EncodedString(), Data(compressed).base64EncodedString(), "not base64!", "", Data(repeating: 0, count: 65).base64EncodedString()]
        for bad in badKeys {
            assertReason(.invalidParams) { try service.enrollKey(token: strong.session, deviceID: "iphone-1", publicKey: bad, protection: "biometry", caller: caller) }
        }
        assertReason(.invalidParams) { try service.enrollKey(token: strong.session, deviceID: "iphone-1", publicKey: phone.publicKeyBase64, protection: "face", caller: caller) }
        assertReason(.invalidParams) { try service.enrollKey(token: strong.session, deviceID: "other-device", publicKey: phone.publicKeyBase64, protection: "biometry", caller: caller) }
        let urlSafe = Base64URL.encode(phone.key.publicKey.x963)
        XCTAssertTrue(try service.enrollKey(token: strong.session, deviceID: "iphone-1", publicKey: urlSafe, protection: "biometry", caller: caller).hasPrefix("key_"))
    }

    func testBiometryKeyLoginGivesAnAAL2Session() throws {
        let (_, keyID) = try enroll()
        XCTAssertEqual(try appLogin().requiredFactors, ["device_key"], "the device has a key (and is trusted)")
        let result = try keyLogin()
        XCTAssertEqual(result.aal, 2)
        XCTAssertEqual(result.requiredFactors, [])
        let session = try service.introspect(token: result.session)
        XCTAssertEqual(session.aal2At, clock.nowSeconds)
        let keys = try service.keys(token: result.session)
        XCTAssertEqual(keys.map(\.keyID), [keyID])
        XCTAssertEqual(keys.first?.lastUsedAt, clock.nowSeconds)
    }

    func testUserPresenceKeyProvesPossessionOnly() throws {
        _ = try enroll("user_presence")
        XCTAssertEqual(try keyLogin().aal, 1)
        let weak = try login()
        let challenge = try service.challenge(deviceID: "iphone-1", token: weak.session, username: nil).challenge
        XCTAssertEqual(try service.verifyKey(token: weak.session, deviceID: "iphone-1", challenge: challenge, signature: phone.sign(challenge), caller: caller), 1)
    }

    func testVerifyKeyLiftsASessionToAAL2() throws {
        _ = try enroll()
        let weak = try login()
        XCTAssertEqual(weak.aal, 1)
        let challenge = try service.challenge(deviceID: "iphone-1", token: weak.session, username: nil).challenge
        XCTAssertEqual(try service.verifyKey(token: weak.session, deviceID: "iphone-1", challenge: challenge, signature: phone.sign(challenge), caller: caller), 2)
        XCTAssertEqual(try service.introspect(token: weak.session).aal, 2)
    }

    func testEachBadChallengeHasItsOwnError() throws {
        _ = try enroll()
        let intruder = FakeiPhone(deviceID: "iphone-1")
        // Wrong signature (another key): invalid_credentials, and the challenge is burnt.
        let challenge = try service.challenge(deviceID: "iphone-1", token: nil, username: "alice").challenge
        assertReason(.invalidCredentials) {
            try service.keyLogin(username: "alice", deviceID: "iphone-1", challenge: challenge, signature: intruder.sign(challenge), caller: caller)
        }
        assertIdentityError(.invalidChallenge(detail: "used")) {
            try service.keyLogin(username: "alice", deviceID: "iphone-1", challenge: challenge, signature: phone.sign(challenge), caller: caller)
        }
        // Reused after success.
        let once = try service.challenge(deviceID: "iphone-1", token: nil, username: "alice").challenge
        XCTAssertNoThrow(try service.keyLogin(username: "alice", deviceID: "iphone-1", challenge: once, signature: phone.sign(once), caller: caller))
        assertIdentityError(.invalidChallenge(detail: "used")) {
            try service.keyLogin(username: "alice", deviceID: "iphone-1", challenge: once, signature: phone.sign(once), caller: caller)
        }
        // Expired.
        let stale = try service.challenge(deviceID: "iphone-1", token: nil, username: "alice").challenge
        clock.advance(seconds: 121)
        assertIdentityError(.invalidChallenge(detail: "expired")) {
            try service.keyLogin(username: "alice", deviceID: "iphone-1", challenge: stale, signature: phone.sign(stale), caller: caller)
        }
        // Never issued.
        let made = Base64URL.encode(SecureRandom.bytes(32))
        assertIdentityError(.invalidChallenge(detail: "unknown")) {
            try service.keyLogin(username: "alice", deviceID: "iphone-1", challenge: made, signature: phone.sign(made), caller: caller)
        }
        // Malformed encodings.
        assertReason(.invalidParams) { try service.keyLogin(username: "alice", deviceID: "iphone-1", challenge: "short", signature: phone.sign(made), caller: caller) }
        assertReason(.invalidParams) { try service.keyLogin(username: "alice", deviceID: "iphone-1", challenge: made, signature: "%%%", caller: caller) }
    }

    func testAChallengeForAnotherUserOrDeviceIsForeign() throws {
        _ = try enroll()
        let tablet = FakeiPhone(deviceID: "ipad-1")
        _ = try enroll(device: tablet)
        try registerUser("bob")
        let forTablet = try service.challenge(deviceID: "ipad-1", token: nil, username: "alice").challenge
        assertIdentityError(.invalidChallenge(detail: "foreign")) {
            try service.keyLogin(username: "alice", deviceID: "iphone-1", challenge: forTablet, signature: phone.sign(forTablet), caller: caller)
        }
        XCTAssertNoThrow(try service.keyLogin(username: "alice", deviceID: "ipad-1", challenge: forTablet, signature: tablet.sign(forTablet), caller: caller),
                         "a foreign use does not burn the owner's challenge")
        let forBob = try service.challenge(deviceID: "iphone-1", token: nil, username: "bob").challenge
        assertIdentityError(.invalidChallenge(detail: "foreign")) {
            try service.keyLogin(username: "alice", deviceID: "iphone-1", challenge: forBob, signature: phone.sign(forBob), caller: caller)
        }
    }

    func testRevokedAndMissingKeysAreNotFound() throws {
        let (session, keyID) = try enroll()
        try service.revokeKey(token: session.session, keyID: keyID, caller: caller)
        assertReason(.invalidCredentials) { try keyLogin() }
        assertReason(.notFound) { try service.revokeKey(token: session.session, keyID: keyID, caller: caller) }
        XCTAssertEqual(try service.keys(token: session.session), [])
        XCTAssertEqual(try appLogin().requiredFactors, [], "no key any more; device still trusted")
        assertReason(.invalidCredentials) { try keyLogin(FakeiPhone(deviceID: "never-seen")) }
        assertReason(.invalidCredentials) { try keyLogin(username: "nobody") }
    }

    func testReEnrollingReplacesTheDevicesKeyAndTheLimitHolds() throws {
        service = try makeService { $0.maxKeysPerUser = 2 }
        let (session, first) = try enroll()
        let newKey = FakeiPhone(deviceID: "iphone-1")
        let second = try service.enrollKey(token: session.session, deviceID: "iphone-1", publicKey: newKey.publicKeyBase64, protection: "biometry", caller: caller)
        XCTAssertEqual(try service.keys(token: session.session).map(\.keyID), [second])
        XCTAssertNotEqual(first, second)
        XCTAssertNoThrow(try keyLogin(newKey))
        _ = try enroll(device: FakeiPhone(deviceID: "ipad-1"))
        let third = FakeiPhone(deviceID: "ipad-2")
        let thirdSession = try elevatedLogin(device: "ipad-2")
        assertIdentityError(.keyLimit(2)) {
            try service.enrollKey(token: thirdSession.session, deviceID: "ipad-2", publicKey: third.publicKeyBase64, protection: "biometry", caller: caller)
        }
    }

    func testUsersCannotRevokeOthersKeys() throws {
        let (_, keyID) = try enroll()
        try registerUser("bob")
        let bob = try elevatedLogin("bob")
        assertReason(.notFound) { try service.revokeKey(token: bob.session, keyID: keyID, caller: caller) }
        XCTAssertNoThrow(try keyLogin())
    }

    func testKeyLoginIgnoresThePasswordThrottle() throws {
        _ = try enroll()
        for _ in 0..<6 { _ = try? login(password: "guessing guessing") }
        assertReason(.locked) { try login() }
        XCTAssertEqual(try keyLogin().aal, 2)
    }

    /// Key login tells nothing about which usernames and devices have keys: an unknown user, a
    /// known user without a key on that device, a revoked key and a wrong signature all get the
    /// same answer, and each uses up its challenge (the same write).
    func testKeyLoginAnswersTheSameForUnknownUsersDevicesWithoutKeysAndWrongSignatures() throws {
        _ = try enroll()
        let tablet = FakeiPhone(deviceID: "ipad-1")
        let (tabletSession, revokedID) = try enroll(device: tablet)
        try service.revokeKey(token: tabletSession.session, keyID: revokedID, caller: caller)
        let intruder = FakeiPhone(deviceID: "iphone-1")
        let cases: [(name: String, username: String, device: FakeiPhone)] = [
            ("unknown user", "nobody", phone), ("no key on this device", "alice", FakeiPhone(deviceID: "never-seen")),
            ("revoked key", "alice", tablet), ("wrong signature", "alice", intruder),
        ]
        var answers: [String: String] = [:]
        for attempt in cases {
            let challenge = try service.challenge(deviceID: attempt.device.deviceID, token: nil, username: attempt.username).challenge
            let error = assertReason(.invalidCredentials) {
                try service.keyLogin(username: attempt.username, deviceID: attempt.device.deviceID, challenge: challenge, signature: attempt.device.sign(challenge), caller: caller)
            }
            answers[attempt.name] = error.map { "\($0.code) \($0.message) \(String(describing: $0.data))" }
            assertIdentityError(.invalidChallenge(detail: "used")) {  // used up either way
                try service.keyLogin(username: attempt.username, deviceID: attempt.device.deviceID, challenge: challenge, signature: attempt.device.sign(challenge), caller: caller)
            }
        }
        XCTAssertEqual(Set(answers.values).count, 1, "one answer for all: \(answers)")
    }
}
