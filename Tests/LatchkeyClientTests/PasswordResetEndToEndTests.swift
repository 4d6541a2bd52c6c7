import Foundation
import LatchkeyClient
import XCTest

/// The reset flow as the app runs it: request, the mailed link opened and parsed, validate,
/// a weak then a good password, and what a reset ends.
final class PasswordResetEndToEndTests: ClientStackTestCase {
    func testTheMailedLinkResetsThePasswordOnceAndEndsTheSessions() async throws {
        let signedIn = try client()
        try await signInWithCode(signedIn)
        let app = try client()
        try await app.requestPasswordReset(email: "demo@example.com")
        try await app.requestPasswordReset(email: "nobody@example.com")  // the same answer
        await XCTAssertThrowsLatchkeyError(.invalidParams(field: "email", rule: nil)) { try await app.requestPasswordReset(email: "not an address") }

        // The reset link's mail, not a notice about a factor the sign-in paid.
        let mail = try await awaitMessage {
            $0["channel"]?.stringValue == "email" && $0["to"]?.stringValue == "demo@example.com" && ($0["text"]?.stringValue?.contains("latchkey://reset-password") ?? false)
        }
        let text = try XCTUnwrap(mail["text"]?.stringValue)
        let linkText = try XCTUnwrap(text.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("latchkey://reset-password") }, text)
        let link = try XCTUnwrap(URL(string: String(linkText)).flatMap { ResetLink(url: $0) }, String(linkText))

        let expiresAt = try await app.validateResetToken(link.token)
        XCTAssertGreaterThan(expiresAt, Date())
        await XCTAssertThrowsLatchkeyError(.weakPassword(rule: "too_short")) {
            try await app.completePasswordReset(token: link.token, newPassword: "short")
        }
        try await app.completePasswordReset(token: link.token, newPassword: "a brand new passphrase")
        await XCTAssertThrowsLatchkeyError(.invalidToken(detail: nil)) { try await app.validateResetToken(link.token) }
        await XCTAssertThrowsLatchkeyError(.invalidToken(detail: nil)) {
            try await app.completePasswordReset(token: link.token, newPassword: "another new passphrase")
        }

        await XCTAssertThrowsLatchkeyError(.unauthenticated) { try await signedIn.balances() }
        await XCTAssertThrowsLatchkeyError(.invalidCredentials) {
            try await app.signIn(username: "demo", password: self.demoPassword, deviceID: "iphone-1")
        }
        // Reset never signs in, and no device stays trusted: the next sign-in owes a code again.
        let after = try await app.signIn(username: "demo", password: "a brand new passphrase", deviceID: "iphone-1")
        XCTAssertEqual(after.requiredFactors, [.sms])
    }
}
