import Foundation
import LatchkeyClient
import XCTest

/// Biometric keys through the client: enroll, sign in with the key, pay the `device_key`
/// factor, list and revoke. A software P-256 key stands in for the Secure Enclave.
final class DeviceKeyEndToEndTests: ClientStackTestCase {
    func testEnrollSignInWithTheKeyVerifyItListAndRevoke() async throws {
        let client = try client()
        let signer = SoftwareSigner(protection: .biometry)
        try await signInWithCode(client)
        let keyID = try await client.enrollDeviceKey(deviceID: "iphone-1", signer: signer)
        let keys = try await client.deviceKeys()
        XCTAssertEqual(keys.map(\.keyID), [keyID])
        XCTAssertEqual(keys.first?.protection, .biometry)
        try await client.signOut()

        // Face ID instead of the password: a biometry key is two factors at once.
        let keySignIn = try await client.signIn(username: "demo", deviceID: "iphone-1", signer: signer)
        XCTAssertEqual(keySignIn.aal, 2)
        XCTAssertEqual(keySignIn.requiredFactors, [])
        let balances = try await client.balances()
        XCTAssertEqual(balances.count, 2)

        // A password sign-in on this device owes a factor, and the key pays it.
        let passwordSignIn = try await client.signIn(username: "demo", password: demoPassword, deviceID: "iphone-1")
        XCTAssertTrue(passwordSignIn.requiredFactors.contains(.deviceKey), "\(passwordSignIn.requiredFactors)")
        let aal = try await client.verifyDeviceKey(deviceID: "iphone-1", signer: signer)
        XCTAssertEqual(aal, 2)

        try await client.revokeDeviceKey(keyID: keyID)
        let keysAfter = try await client.deviceKeys()
        XCTAssertEqual(keysAfter, [])
        await XCTAssertThrowsLatchkeyError(.invalidCredentials) {  // as a wrong signature: no key is revealed
            try await client.signIn(username: "demo", deviceID: "iphone-1", signer: signer)
        }
        await XCTAssertThrowsLatchkeyError(.notFound(detail: nil)) { try await client.revokeDeviceKey(keyID: keyID) }
    }

    func testAnotherKeysSignatureIsInvalidCredentials() async throws {
        let client = try client()
        try await signInWithCode(client)
        _ = try await client.enrollDeviceKey(deviceID: "iphone-1", signer: SoftwareSigner(protection: .biometry))
        await XCTAssertThrowsLatchkeyError(.invalidCredentials) {
            try await client.signIn(username: "demo", deviceID: "iphone-1", signer: SoftwareSigner(protection: .biometry))
        }
    }

    func testAPasscodeKeySignsInAtAal1AndStillOwesItsFactor() async throws {
        let client = try client()
        let signer = SoftwareSigner(protection: .userPresence)
        try await signInWithCode(client)
        _ = try await client.enrollDeviceKey(deviceID: "iphone-1", signer: signer)
        try await client.signOut()
        let signedIn = try await client.signIn(username: "demo", deviceID: "iphone-1", signer: signer)
        XCTAssertEqual(signedIn.aal, 1)
        XCTAssertNotNil(signedIn.sessionID)
    }

    func testEnrollingWithAPasswordAloneIsStepUpRequired() async throws {
        let client = try client()
        _ = try await client.signIn(username: "demo", password: demoPassword, deviceID: "iphone-1")
        await XCTAssertThrowsLatchkeyError(.stepUpRequired(.factorsOwed([.sms]))) {
            try await client.enrollDeviceKey(deviceID: "iphone-1", signer: SoftwareSigner(protection: .biometry))
        }
    }
}
