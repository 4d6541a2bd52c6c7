import Foundation
import LineProtocol
import Secrets
import TestSupport
import WebAuthn
import XCTest

@testable import Identity

/// The passkey ceremonies against the real store (both backends), with a software
/// authenticator playing the browser or the iPhone. The verifier's own checks are tested in
/// WebAuthnTests; these hold the service's rules: challenges, factors, counters, ownership.
final class PasskeyTests: IdentityTestCase {
    static let origin = "https://localhost"

    override func setUpWithError() throws {
        try super.setUpWithError()
        try registerUser()
    }

    private func challenge(_ options: JSON) throws -> [UInt8] {
        try XCTUnwrap(options["challenge"]?.stringValue.flatMap(Base64URL.decode))
    }

    @discardableResult
    private func register(_ authenticator: SoftwareAuthenticator, session: String? = nil, name: String? = nil) throws -> String {
        let session = try session ?? elevatedLogin().session
        let made = authenticator.register(challenge: try challenge(try service.passkeyRegisterOptions(token: session)))
        let credential = PasskeyCredential(
            credentialID: authenticator.credentialID, clientDataJSON: made.clientDataJSON, authenticatorBytes: made.attestationObject, signature: [],
            userHandle: nil, transports: ["internal"])
        return try service.passkeyRegister(token: session, credential: credential, name: name, caller: caller)
    }

    private func assertion(_ authenticator: SoftwareAuthenticator, challenge: [UInt8], userVerified: Bool = true, handle: [UInt8]? = nil) -> PasskeyCredential {
        let signed = authenticator.assert(challenge: challenge, userVerified: userVerified)
        return PasskeyCredential(
            credentialID: authenticator.credentialID, clientDataJSON: signed.clientDataJSON, authenticatorBytes: signed.authenticatorData,
            signature: signed.signature, userHandle: handle, transports: [])
    }

    private func signIn(_ authenticator: SoftwareAuthenticator, username: String? = nil, userVerified: Bool = true, device: String = "laptop") throws -> LoginResult {
        let options = try service.passkeyLoginOptions(username: username, caller: caller)
        return try service.passkeyLogin(
            credential: assertion(authenticator, challenge: try challenge(options), userVerified: userVerified), deviceID: device, deviceToken: nil,
            caller: caller)
    }

    private func authenticator(origin: String = PasskeyTests.origin, rpID: String = "localhost", counting: Bool = false) -> SoftwareAuthenticator {
        SoftwareAuthenticator(rpID: rpID, origin: origin, countsSignatures: counting)
    }

    func testRegistrationOptionsNeedARecentStepUpAndGiveAnOpaqueHandleAndTheCredentialsToExclude() throws {
        assertIdentityError(.factorsOwed(["sms"])) { try service.passkeyRegisterOptions(token: try login().session) }
        let session = try elevatedLogin().session
        let first = try service.passkeyRegisterOptions(token: session)
        XCTAssertEqual(try challenge(first).count, 32)
        XCTAssertEqual(first["rp"]?["id"], "localhost")
        XCTAssertEqual(first["user"]?["name"], "alice")
        let handle = try XCTUnwrap(first["user"]?["id"]?.stringValue.flatMap(Base64URL.decode))
        XCTAssertEqual(handle.count, 64)
        let userID = try XCTUnwrap(service.store.user(username: "alice")?.userID)
        XCTAssertFalse(String(decoding: handle, as: UTF8.self).contains(userID), "the handle is not the user id")
        XCTAssertEqual(first["pubKeyCredParams"]?.arrayValue?.compactMap { $0["alg"]?.intValue }, [-7, -257])
        XCTAssertEqual(first["authenticatorSelection"]?["residentKey"], "required")
        XCTAssertEqual(first["authenticatorSelection"]?["userVerification"], "required")
        XCTAssertEqual(first["excludeCredentials"]?.arrayValue?.count, 0)
        let phone = authenticator()
        try register(phone, session: session)
        let second = try service.passkeyRegisterOptions(token: session)
        XCTAssertNotEqual(try challenge(second), try challenge(first))
        XCTAssertEqual(second["user"]?["id"], first["user"]?["id"], "one handle per user")
        XCTAssertEqual(second["excludeCredentials"]?.arrayValue?.first?["id"]?.stringValue, Base64URL.encode(phone.credentialID))
    }

    func testAUserVerifiedPasskeySignsInUsernamelessAtAAL2AndWithoutUVOwesAFactor() throws {
        let phone = authenticator()
        let passkeyID = try register(phone, name: "Alice's iPhone")
        let verified = try signIn(phone)
        XCTAssertEqual(verified.aal, 2)
        XCTAssertEqual(verified.requiredFactors, [])
        XCTAssertNoThrow(try service.passkeys(token: verified.session))
        let presence = try signIn(phone, userVerified: false, device: "kiosk")
        XCTAssertEqual(presence.aal, 1)
        XCTAssertTrue(presence.requiredFactors.contains("passkey"), "\(presence.requiredFactors)")
        let listed = try service.passkeys(token: verified.session)
        XCTAssertEqual(listed.map(\.passkeyID), [passkeyID])
        XCTAssertEqual(listed.first?.name, "Alice's iPhone")
        XCTAssertEqual(listed.first?.attestation, "none")
        XCTAssertNotNil(listed.first?.lastUsedAt)
        XCTAssertEqual(try service.store.ownedFactors(userID: listed[0].userID).factors, ["sms", "passkey"])
    }

    func testEachChallengeWorksOnceForItsOwnCeremonyAndNotAfterItExpires() throws {
        let phone = authenticator()
        try register(phone)
        let options = try service.passkeyLoginOptions(username: nil, caller: caller)
        let credential = assertion(phone, challenge: try challenge(options))
        XCTAssertNoThrow(try service.passkeyLogin(credential: credential, deviceID: "laptop", deviceToken: nil, caller: caller))
        assertIdentityError(.invalidChallenge(detail: "used")) {
            try service.passkeyLogin(credential: credential, deviceID: "laptop", deviceToken: nil, caller: caller)
        }
        let registration = try service.passkeyRegisterOptions(token: try elevatedLogin().session)
        assertIdentityError(.invalidChallenge(detail: "foreign")) {
            try service.passkeyLogin(credential: assertion(phone, challenge: try challenge(registration)), deviceID: "laptop", deviceToken: nil, caller: caller)
        }
        let late = try service.passkeyLoginOptions(username: nil, caller: caller)
        clock.advance(seconds: service.settings.passkeys.ceremonySeconds)
        assertIdentityError(.invalidChallenge(detail: "expired")) {
            try service.passkeyLogin(credential: assertion(phone, challenge: try challenge(late)), deviceID: "laptop", deviceToken: nil, caller: caller)
        }
        assertIdentityError(.invalidChallenge(detail: "unknown")) {
            try service.passkeyLogin(credential: assertion(phone, challenge: SecureRandom.bytes(32)), deviceID: "laptop", deviceToken: nil, caller: caller)
        }
    }

    func testAnotherOriginOrRelyingPartyIsRefusedWithItsReason() throws {
        let phone = authenticator()
        try register(phone)
        let elsewhere = SoftwareAuthenticator(rpID: "localhost", origin: "https://evil.example")
        let session = try elevatedLogin().session
        let made = elsewhere.register(challenge: try challenge(try service.passkeyRegisterOptions(token: session)))
        let refused = PasskeyCredential(
            credentialID: elsewhere.credentialID, clientDataJSON: made.clientDataJSON, authenticatorBytes: made.attestationObject, signature: [],
            userHandle: nil, transports: [])
        assertReason(.invalidCredentials) { try service.passkeyRegister(token: session, credential: refused, name: nil, caller: caller) }
        XCTAssertEqual(IdentityError.ceremonyRefused(WebAuthnError(.originNotAllowed, "x")).rpcError.data?["detail"], "origin_not_allowed")
        let otherRP = authenticator(rpID: "evil.example")
        let made2 = otherRP.register(challenge: try challenge(try service.passkeyRegisterOptions(token: session)))
        do {
            _ = try service.passkeyRegister(
                token: session,
                credential: PasskeyCredential(
                    credentialID: otherRP.credentialID, clientDataJSON: made2.clientDataJSON, authenticatorBytes: made2.attestationObject, signature: [],
                    userHandle: nil, transports: []),
                name: nil, caller: caller)
            XCTFail("another RP ID's registration was accepted")
        } catch IdentityError.ceremonyRefused(let refusal) {
            XCTAssertEqual(refusal.reason, .rpIDMismatch)
        }
    }

    func testUnknownCredentialsAndWrongSignaturesGetTheSameAnswer() throws {
        let phone = authenticator()
        try register(phone)
        let stranger = authenticator()
        let unknown = assertReason(.invalidCredentials) { try signIn(stranger) }
        let options = try service.passkeyLoginOptions(username: nil, caller: caller)
        var forged = assertion(phone, challenge: try challenge(options))
        forged.signature[forged.signature.count - 3] ^= 0x40
        let wrong = assertReason(.invalidCredentials) { try service.passkeyLogin(credential: forged, deviceID: "x", deviceToken: nil, caller: caller) }
        XCTAssertEqual(unknown?.message, wrong?.message)
        XCTAssertNil(unknown?.data?["detail"])
        XCTAssertNil(wrong?.data?["detail"])
    }

    func testAForeignUserHandleOrAnotherUsersChallengeIsRefused() throws {
        let phone = authenticator()
        try register(phone)
        let options = try service.passkeyLoginOptions(username: nil, caller: caller)
        assertReason(.invalidCredentials) {
            try service.passkeyLogin(
                credential: assertion(phone, challenge: try challenge(options), handle: SecureRandom.bytes(64)), deviceID: "x", deviceToken: nil,
                caller: caller)
        }
        try registerUser("bob", phone: "5555550111")
        let bobs = try service.passkeyLoginOptions(username: "bob", caller: caller)
        assertReason(.invalidCredentials) {
            try service.passkeyLogin(credential: assertion(phone, challenge: try challenge(bobs)), deviceID: "x", deviceToken: nil, caller: caller)
        }
        let alices = try service.passkeyLoginOptions(username: "alice", caller: caller)
        let nobodys = try service.passkeyLoginOptions(username: "nobody", caller: caller)
        XCTAssertEqual(Set(alices.objectValue?.keys ?? [:].keys), Set(nobodys.objectValue?.keys ?? [:].keys))
        XCTAssertEqual(alices["allowCredentials"], nobodys["allowCredentials"], "the same answer for a username nobody has")
        let handle = try service.store.passkeyUserHandle(userID: try XCTUnwrap(service.store.user(username: "alice")?.userID))
        XCTAssertEqual(
            try service.passkeyLogin(credential: assertion(phone, challenge: try challenge(alices), handle: handle), deviceID: "x", deviceToken: nil, caller: caller)
                .aal, 2)
    }

    func testACounterThatGoesBackwardsFlagsThePasskeyForGood() throws {
        let key = authenticator(counting: true)
        try register(key)
        let first = try challenge(try service.passkeyLoginOptions(username: nil, caller: caller))
        let second = try challenge(try service.passkeyLoginOptions(username: nil, caller: caller))
        let older = assertion(key, challenge: first)
        let newer = assertion(key, challenge: second)
        XCTAssertEqual(try service.passkeyLogin(credential: newer, deviceID: "x", deviceToken: nil, caller: caller).aal, 2)
        let regressed = assertReason(.invalidCredentials) { try service.passkeyLogin(credential: older, deviceID: "x", deviceToken: nil, caller: caller) }
        XCTAssertEqual(regressed?.data?["detail"], "counter_regressed")
        assertReason(.invalidCredentials) { try signIn(key) }
        let session = try elevatedLogin().session
        XCTAssertEqual(try service.passkeys(token: session).first.map { $0.flaggedAt != nil }, true)
        XCTAssertFalse(try service.store.ownedFactors(userID: try XCTUnwrap(service.store.user(username: "alice")?.userID)).factors.contains("passkey"))
    }

    func testACredentialIsRegisteredOnceAcrossUsers() throws {
        let phone = authenticator()
        try register(phone)
        assertReason(.conflict) { try register(phone) }
        try registerUser("bob", phone: "5555550111")
        assertReason(.conflict) { try register(phone, session: try elevatedLogin("bob", device: "bobs-phone").session) }
    }

    func testStepUpPaysTheOwedFactorOnlyWithUserVerification() throws {
        let phone = authenticator()
        try register(phone)
        let weak = try login(device: "new-laptop")
        XCTAssertTrue(weak.requiredFactors.contains("passkey"))
        let options = try service.passkeyVerifyOptions(token: weak.session)
        XCTAssertEqual(options["userVerification"], "required")
        XCTAssertEqual(options["allowCredentials"]?.arrayValue?.count, 1)
        do {
            _ = try service.passkeyVerify(token: weak.session, credential: assertion(phone, challenge: try challenge(options), userVerified: false), caller: caller)
            XCTFail("a step-up without user verification was accepted")
        } catch IdentityError.ceremonyRefused(let refusal) {
            XCTAssertEqual(refusal.reason, .userNotVerified)
        }
        let again = try service.passkeyVerifyOptions(token: weak.session)
        XCTAssertEqual(try service.passkeyVerify(token: weak.session, credential: assertion(phone, challenge: try challenge(again)), caller: caller), 2)
        XCTAssertEqual(try service.assurance(of: try service.introspect(token: weak.session)).requiredFactors, [])
        try registerUser("bob", phone: "5555550111")
        let bob = try login("bob", device: "bobs-phone")
        let bobs = try service.passkeyVerifyOptions(token: bob.session)
        assertReason(.invalidCredentials) { try service.passkeyVerify(token: bob.session, credential: assertion(phone, challenge: try challenge(bobs)), caller: caller) }
    }

    func testRevokingNeedsAStepUpAndEndsThePasskey() throws {
        let phone = authenticator()
        let passkeyID = try register(phone)
        let session = try signIn(phone).session
        assertReason(.notFound) { try service.revokePasskey(token: session, passkeyID: "pk_nothing", caller: caller) }
        clock.advance(seconds: service.settings.stepUpWindowSeconds)
        assertReason(.stepUpRequired) { try service.revokePasskey(token: session, passkeyID: passkeyID, caller: caller) }
        let fresh = try elevatedLogin().session
        try service.revokePasskey(token: fresh, passkeyID: passkeyID, caller: caller)
        assertReason(.invalidCredentials) { try signIn(phone) }
        XCTAssertEqual(try service.passkeys(token: fresh), [])
    }

    func testAResetRemovesPasskeysAddedWithinItsWindowAndDeletionErasesThemAll() throws {
        let old = authenticator()
        try register(old)
        clock.advance(seconds: service.settings.resetRemovesFactorsSetUpWithinSeconds + 60)
        let recent = authenticator()
        try register(recent)
        let userID = try XCTUnwrap(service.store.user(username: "alice")?.userID)
        let cleanup = try service.cleanUpAfterReset(userID: userID, caller: caller)
        XCTAssertTrue(cleanup.recentFactors.contains("passkey"))
        assertReason(.invalidCredentials) { try signIn(recent) }
        XCTAssertEqual(try signIn(old).aal, 2, "a passkey older than the window stays")
    }

    func testOneAssertionSentManyTimesAtOnceSignsInOnce() throws {
        let phone = authenticator()
        try register(phone)
        let credential = assertion(phone, challenge: try challenge(try service.passkeyLoginOptions(username: nil, caller: caller)))
        let replicas = backend == .postgres ? [service!, try makeService()] : [service!]
        let outcomes = Tally()
        let caller = caller
        DispatchQueue.concurrentPerform(iterations: 16) { index in
            do {
                _ = try replicas[index % replicas.count].passkeyLogin(credential: credential, deviceID: "x", deviceToken: nil, caller: caller)
                outcomes.record("session")
            } catch let error as IdentityError {
                outcomes.record(error.rpcError.data?["detail"]?.stringValue ?? "other")
            } catch {
                outcomes.record("unexpected")
            }
        }
        XCTAssertEqual(outcomes.counts, ["session": 1, "used": 15])
    }
}
