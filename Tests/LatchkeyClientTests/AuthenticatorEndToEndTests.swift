import Foundation
import LatchkeyClient
import XCTest

/// An authenticator app (TOTP) through the client: set up after a recent step-up, then owed at
/// every sign-in and paid with its code; the errors a person meets on the way. The test plays
/// the app with its own RFC 6238 implementation (`AuthenticatorApp`).
final class AuthenticatorEndToEndTests: ClientStackTestCase {
    /// Enrolls and activates an app for the signed-in demo user; returns it and the step its
    /// activation spent (a code is good once: the next one must be of a later step).
    private func setUpAuthenticator(_ client: LatchkeyClient) async throws -> (AuthenticatorApp, UInt64) {
        let enrollment = try await client.enrollAuthenticator()
        XCTAssertTrue(enrollment.uri.hasPrefix("otpauth://totp/"), enrollment.uri)
        XCTAssertTrue(enrollment.uri.contains("secret=\(enrollment.secret)"), "the QR code and the typed secret agree")
        let app = try XCTUnwrap(AuthenticatorApp(base32: enrollment.secret))
        let step = AuthenticatorApp.step(at: Date())
        try await client.activateAuthenticator(code: app.code(step: step))
        return (app, step)
    }

    func testAnAppSetUpAfterAStepUpIsOwedAtTheNextSignInAndItsCodePaysItOnce() async throws {
        let client = try client()
        try await signInWithCode(client)
        let before = try await client.preferences()
        XCTAssertEqual(before.factors, [.sms])
        let (app, spent) = try await setUpAuthenticator(client)
        let after = try await client.preferences()
        XCTAssertEqual(after.factors, [.sms, .totp])
        await XCTAssertThrowsLatchkeyError(.conflict(field: nil, detail: "totp_active", status: nil)) { try await client.enrollAuthenticator() }

        // Even on this trusted device the next sign-in owes the app's code.
        try await client.signOut()
        let signedIn = try await client.signIn(username: "demo", password: demoPassword, deviceID: "iphone-1")
        XCTAssertEqual(signedIn.requiredFactors, [.totp])
        await XCTAssertThrowsLatchkeyError(.stepUpRequired(.factorsOwed([.totp]))) { try await client.balances() }
        let next = app.code(step: spent + 1)
        let aal = try await client.verifyAuthenticatorCode(next)
        XCTAssertEqual(aal, 2)
        let balances = try await client.balances()
        XCTAssertEqual(balances.count, 2)

        // The same code read over the shoulder is no good on another phone.
        let other = try self.client()
        let otherSignIn = try await other.signIn(username: "demo", password: demoPassword, deviceID: "thief-phone")
        XCTAssertTrue(otherSignIn.requiredFactors.contains(.totp), "\(otherSignIn.requiredFactors)")
        await XCTAssertThrowsLatchkeyError(.invalidCode(attemptsLeft: 2)) { try await other.verifyAuthenticatorCode(next) }

        try await client.removeAuthenticator()
        let removed = try await client.preferences()
        XCTAssertEqual(removed.factors, [.sms])
        await XCTAssertThrowsLatchkeyError(.notFound(detail: "no_totp")) { try await client.removeAuthenticator() }
    }

    func testWrongCodesCountDownThenTheFactorIsLockedWithItsRetryAfter() async throws {
        let client = try client()
        try await signInWithCode(client)
        let (app, spent) = try await setUpAuthenticator(client)
        let guesser = try self.client()
        _ = try await guesser.signIn(username: "demo", password: demoPassword, deviceID: "laptop")
        let right = app.code(step: spent + 1)
        let wrong = right == "000000" ? "111111" : "000000"
        for left in [2, 1, 0] {
            await XCTAssertThrowsLatchkeyError(.invalidCode(attemptsLeft: left)) { try await guesser.verifyAuthenticatorCode(wrong) }
        }
        // Locked: even the right code waits, unchecked.
        await XCTAssertThrowsLocked(lockSeconds: 30) { try await guesser.verifyAuthenticatorCode(right) }
        XCTAssertEqual(try gatewayCount("identity.totp_verify"), 4, "a locked answer is not retried by the client")
    }

    func testSettingUpAnAppNeedsTheSecondFactorFirst() async throws {
        let client = try client()
        _ = try await client.signIn(username: "demo", password: demoPassword, deviceID: "iphone-1")
        await XCTAssertThrowsLatchkeyError(.stepUpRequired(.factorsOwed([.sms]))) { try await client.enrollAuthenticator() }
        // Without an app, its code pays nothing.
        await XCTAssertThrowsLatchkeyError(.notFound(detail: "no_totp")) { try await client.verifyAuthenticatorCode("123456") }
        await XCTAssertThrowsLatchkeyError(.invalidParams(field: "code", rule: nil)) { try await client.verifyAuthenticatorCode("12ab") }
    }
}
