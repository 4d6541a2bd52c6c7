import AppAttestTestSupport
import Foundation
import LineProtocol
import Secrets
import TestSupport
import WebAuthn
import XCTest

@testable import Identity

/// Device keys vouched for by App Attest: the enrolment's attestation binds the challenge and
/// the device key, each use may carry an assertion whose counter only grows, and
/// `--require-app-attest` keeps unattested keys from aal 2 and from money. The chain is the
/// test's own (`AppAttestAuthority`), configured as the root.
final class AppAttestTests: IdentityTestCase {
    static let appID = "ABCDE12345.com.example.bank"
    let phone = FakeiPhone(deviceID: "iphone-1")
    var authority: AppAttestAuthority!

    override func setUpWithError() throws {
        try super.setUpWithError()
        authority = try AppAttestAuthority.shared()
        service = try attestingService(required: false)
        try registerUser()
    }

    private func attestingService(required: Bool, environment: AppAttest.Environment = .development) throws -> IdentityService {
        let root = try X509Certificate(pem: authority.rootPEM)
        return try makeService {
            $0.appAttest = AppAttestSettings(policy: AppAttest.Policy(appIDs: [Self.appID], environment: environment, roots: [root]), required: required)
        }
    }

    /// A stepped-up session, then the enrolment of `phone`'s key with `device`'s attestation over
    /// `clientDataHash` (by default the one the server expects).
    @discardableResult
    private func enroll(
        _ device: AppAttestDevice?, session given: String? = nil, days: Int = 60, clientDataHash: (([UInt8]) -> [UInt8])? = nil
    ) throws -> String {
        let session = try given ?? elevatedLogin().session
        guard let device else {
            return try service.enrollKey(token: session, deviceID: phone.deviceID, publicKey: phone.publicKeyBase64, protection: "biometry", caller: caller)
        }
        let challenge = try service.appAttestChallenge(token: session).challenge
        let bytes = try XCTUnwrap(Base64URL.decode(challenge))
        let hash = clientDataHash?(bytes) ?? SHA256.hash(bytes + phone.key.publicKey.x963)
        let attestation = try device.attest(clientDataHash: hash, days: days)
        return try service.enrollKey(
            token: session, deviceID: phone.deviceID, publicKey: phone.publicKeyBase64, protection: "biometry",
            appAttest: AppAttestEnrollment(keyID: device.keyID, attestation: Data(attestation).base64EncodedString(), challenge: challenge), caller: caller)
    }

    private func device(appID: String = AppAttestTests.appID, environment: AppAttest.Environment = .development) -> AppAttestDevice {
        AppAttestDevice(appID: appID, environment: environment, authority: authority)
    }

    private func keyLogin(assertion: (([UInt8]) -> [UInt8])?) throws -> LoginResult {
        let challenge = try service.challenge(deviceID: phone.deviceID, token: nil, username: "alice").challenge
        let bytes = try XCTUnwrap(Base64URL.decode(challenge))
        return try service.keyLogin(
            username: "alice", deviceID: phone.deviceID, challenge: challenge, signature: phone.sign(challenge),
            appAttestAssertion: assertion.map { Data($0(bytes)).base64EncodedString() }, caller: caller)
    }

    private func refusal(_ body: () throws -> Any) -> String? {
        do {
            _ = try body()
            return nil
        } catch let error as IdentityError {
            return error.rpcError.data?["detail"]?.stringValue ?? error.rpcError.reasonText
        } catch {
            return "\(error)"
        }
    }

    func testAnAttestationBindingTheChallengeAndTheKeyIsStoredAndListed() throws {
        let app = device()
        let keyID = try enroll(app)
        let keys = try service.keys(token: try elevatedLogin().session)
        XCTAssertEqual(keys.first?.keyID, keyID)
        XCTAssertEqual(keys.first?.attestation?.appID, Self.appID)
        XCTAssertEqual(keys.first?.attestation?.environment, "development")
        XCTAssertEqual(keys.first?.json["app_attest"]?["app_id"]?.stringValue, Self.appID)
    }

    func testAPasskeyFromTheAppMayCarryAnAttestationOverItsCredentialID() throws {
        let session = try elevatedLogin().session
        let passkey = SoftwareAuthenticator(rpID: "localhost", origin: "https://localhost")
        let options = try service.passkeyRegisterOptions(token: session)
        let made = passkey.register(challenge: try XCTUnwrap(options["challenge"]?.stringValue.flatMap(Base64URL.decode)))
        let credential = PasskeyCredential(
            credentialID: passkey.credentialID, clientDataJSON: made.clientDataJSON, authenticatorBytes: made.attestationObject, signature: [],
            userHandle: nil, transports: [])
        let challenge = try service.appAttestChallenge(token: session).challenge
        let app = device()
        let attestation = try app.attest(clientDataHash: SHA256.hash(try XCTUnwrap(Base64URL.decode(challenge)) + passkey.credentialID), days: 60)
        _ = try service.passkeyRegister(
            token: session, credential: credential, name: nil,
            appAttest: AppAttestEnrollment(keyID: app.keyID, attestation: Data(attestation).base64EncodedString(), challenge: challenge), caller: caller)
        let listed = try XCTUnwrap(service.passkeys(token: session).first)
        XCTAssertEqual(listed.json["app_attest"]?["app_id"]?.stringValue, Self.appID)
    }

    func testWithoutConfigurationThereIsNoChallengeAndNoAttestedEnrolment() throws {
        service = try makeService()
        let session = try elevatedLogin().session
        XCTAssertEqual(refusal { try service.appAttestChallenge(token: session) }, "app_attest_off")
    }

    func testAnAttestationOfAnotherKeyAppEnvironmentOrTimeIsRefused() throws {
        let other = P256PrivateKey().publicKey.x963
        XCTAssertEqual(refusal { try enroll(device(), clientDataHash: { SHA256.hash($0 + other) }) }, "bad_attestation", "another device key")
        XCTAssertEqual(refusal { try enroll(device(appID: "ABCDE12345.com.example.other")) }, "rp_id_mismatch")
        XCTAssertEqual(refusal { try enroll(device(environment: .production)) }, "bad_attestation", "a production key where development is configured")
        clock.advance(seconds: 2 * 86_400)
        XCTAssertEqual(refusal { try enroll(device(), days: 1) }, "bad_attestation", "a leaf past its validity")
        XCTAssertTrue(try service.keys(token: try elevatedLogin().session).isEmpty, "nothing was enrolled")
    }

    func testAnAttestationsChallengeWorksOnceForItsOwnUser() throws {
        let session = try elevatedLogin().session
        let challenge = try service.appAttestChallenge(token: session).challenge
        let bytes = try XCTUnwrap(Base64URL.decode(challenge))
        let app = device()
        let attestation = Data(try app.attest(clientDataHash: SHA256.hash(bytes + phone.key.publicKey.x963))).base64EncodedString()
        let enrollment = AppAttestEnrollment(keyID: app.keyID, attestation: attestation, challenge: challenge)
        try registerUser("bob", phone: "5555550111")
        let bob = try elevatedLogin("bob", device: phone.deviceID).session
        assertIdentityError(.invalidChallenge(detail: "foreign")) {
            try service.enrollKey(token: bob, deviceID: phone.deviceID, publicKey: phone.publicKeyBase64, protection: "biometry", appAttest: enrollment, caller: caller)
        }
        assertIdentityError(.invalidChallenge(detail: "used")) {
            try service.enrollKey(token: session, deviceID: phone.deviceID, publicKey: phone.publicKeyBase64, protection: "biometry", appAttest: enrollment, caller: caller)
        }
    }

    func testWhenRequiredAnUnattestedKeyProvesPossessionOnlyAndConfirmsNoMoney() throws {
        service = try attestingService(required: true)
        try enroll(nil)
        let login = try keyLogin(assertion: nil)
        XCTAssertEqual(login.aal, 1)
        XCTAssertFalse(login.requiredFactors.contains("device_key"), "an unattested key cannot pay: \(login.requiredFactors)")
        let challenge = try service.challenge(deviceID: phone.deviceID, token: login.session, username: nil).challenge
        XCTAssertEqual(
            refusal { try service.verifyKey(token: login.session, deviceID: phone.deviceID, challenge: challenge, signature: phone.sign(challenge), caller: caller) },
            "app_attest_required")
        let userID = try XCTUnwrap(service.store.user(username: "alice")?.userID)
        let message = Base64URL.encode(Array("latchkey-transfer-v1\namount=100".utf8))
        XCTAssertEqual(
            refusal { try service.verifySignature(userID: userID, deviceID: phone.deviceID, message: message, signature: phone.sign(message), caller: caller) },
            "app_attest_required")
    }

    func testWhenRequiredAnAttestedKeyWithItsAssertionSignsInAtAAL2AndAReplayedCounterIsRefused() throws {
        service = try attestingService(required: true)
        let app = device()
        try enroll(app)
        XCTAssertEqual(try keyLogin(assertion: nil).aal, 1, "no assertion: possession only")
        XCTAssertEqual(try keyLogin(assertion: { app.assert(clientData: $0) }).aal, 2)
        let stale = AppAttestDevice(appID: Self.appID, authority: authority)
        XCTAssertEqual(refusal { try keyLogin(assertion: { stale.assert(clientData: $0) }) }, "bad_signature", "another App Attest key")
        // Two requests signed in order, sent in the other order: the older counter is refused.
        let challenges = try (0..<2).map { _ in try service.challenge(deviceID: phone.deviceID, token: nil, username: "alice").challenge }
        let assertions = try challenges.map { Data(app.assert(clientData: try XCTUnwrap(Base64URL.decode($0)))).base64EncodedString() }
        let newer = try service.keyLogin(
            username: "alice", deviceID: phone.deviceID, challenge: challenges[1], signature: phone.sign(challenges[1]), appAttestAssertion: assertions[1],
            caller: caller)
        XCTAssertEqual(newer.aal, 2)
        XCTAssertEqual(
            refusal {
                try service.keyLogin(
                    username: "alice", deviceID: phone.deviceID, challenge: challenges[0], signature: phone.sign(challenges[0]),
                    appAttestAssertion: assertions[0], caller: caller)
            }, "counter_regressed")
    }

    func testOneAssertionSentManyTimesAtOnceConfirmsOnce() throws {
        service = try attestingService(required: true)
        let app = device()
        try enroll(app)
        let replicas = backend == .postgres ? [service!, try attestingService(required: true)] : [service!]
        let userID = try XCTUnwrap(service.store.user(username: "alice")?.userID)
        let bytes = Array("latchkey-transfer-v1\namount=4200".utf8)
        let message = Base64URL.encode(bytes)
        let signature = phone.sign(message)
        let assertion = Data(app.assert(clientData: bytes)).base64EncodedString()
        let outcomes = Tally()
        let caller = caller
        let deviceID = phone.deviceID
        DispatchQueue.concurrentPerform(iterations: 16) { index in
            do {
                _ = try replicas[index % replicas.count].verifySignature(
                    userID: userID, deviceID: deviceID, message: message, signature: signature, appAttestAssertion: assertion, caller: caller)
                outcomes.record("ok")
            } catch let error as IdentityError {
                outcomes.record(error.rpcError.data?["detail"]?.stringValue ?? "other")
            } catch {
                outcomes.record("unexpected")
            }
        }
        XCTAssertEqual(outcomes.counts, ["ok": 1, "counter_regressed": 15])
    }
}
