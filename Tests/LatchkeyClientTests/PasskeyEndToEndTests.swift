import Foundation
import LatchkeyClient
import WebAuthn
import XCTest

/// Passkeys through the client against the real stack, with a software authenticator in the
/// platform's place: the options decode into the values iOS's requests take, and the values
/// iOS's results give encode into what the server checks.
final class PasskeyEndToEndTests: ClientStackTestCase {
    func testRegisterSignInUsernamelessStepUpListAndRevoke() async throws {
        let client = try client()
        try await signInWithCode(client)
        let options = try await client.passkeyRegistrationOptions()
        XCTAssertEqual(options.rp.id, "localhost")
        XCTAssertEqual(options.user.name, "demo")
        XCTAssertEqual(options.userIDData.count, 64)
        let platform = SoftwareAuthenticator(rpID: options.rp.id, origin: "https://localhost")
        let made = platform.register(challenge: [UInt8](options.challengeData))
        let passkeyID = try await client.registerPasskey(
            PasskeyRegistration(
                credentialID: Data(platform.credentialID), rawClientDataJSON: Data(made.clientDataJSON), rawAttestationObject: Data(made.attestationObject)),
            name: "Demo's iPhone")
        try await client.signOut()

        let signInOptions = try await client.passkeySignInOptions()
        XCTAssertEqual(signInOptions.allowCredentials, [])
        let signed = platform.assert(challenge: [UInt8](signInOptions.challengeData))
        let result = try await client.signIn(
            passkey: PasskeyAssertion(
                credentialID: Data(platform.credentialID), rawClientDataJSON: Data(signed.clientDataJSON),
                rawAuthenticatorData: Data(signed.authenticatorData), signature: Data(signed.signature), userID: options.userIDData),
            deviceID: "macbook")
        XCTAssertEqual(result.aal, 2)
        XCTAssertEqual(result.requiredFactors, [])
        let balances = try await client.balances()
        XCTAssertEqual(balances.count, 2)

        let password = try await client.signIn(username: "demo", password: demoPassword, deviceID: "ipad")
        XCTAssertTrue(password.requiredFactors.contains(.passkey), "\(password.requiredFactors)")
        let stepUp = try await client.passkeyVerificationOptions()
        XCTAssertEqual(stepUp.allowCredentials.map(\.credentialID), [Data(platform.credentialID)])
        let again = platform.assert(challenge: [UInt8](stepUp.challengeData))
        let aal = try await client.verifyPasskey(
            PasskeyAssertion(
                credentialID: Data(platform.credentialID), rawClientDataJSON: Data(again.clientDataJSON),
                rawAuthenticatorData: Data(again.authenticatorData), signature: Data(again.signature), userID: nil))
        XCTAssertEqual(aal, 2)

        let listed = try await client.passkeys()
        XCTAssertEqual(listed.map(\.passkeyID), [passkeyID])
        XCTAssertEqual(listed.first?.name, "Demo's iPhone")
        XCTAssertEqual(listed.first?.flagged, false)
        try await client.revokePasskey(passkeyID: passkeyID)
        let after = try await client.passkeys()
        XCTAssertEqual(after, [])
        let late = try await client.passkeySignInOptions()
        let refused = platform.assert(challenge: [UInt8](late.challengeData))
        await XCTAssertThrowsLatchkeyError(.invalidCredentials) {
            try await client.signIn(
                passkey: PasskeyAssertion(
                    credentialID: Data(platform.credentialID), rawClientDataJSON: Data(refused.clientDataJSON),
                    rawAuthenticatorData: Data(refused.authenticatorData), signature: Data(refused.signature), userID: nil),
                deviceID: "macbook")
        }
    }
}
