import Foundation
import LatchkeyClient
import XCTest

/// What the server shows once (an authenticator secret, recovery codes) never reaches a log
/// through the value's description, debug description or mirror.
final class SecretRedactionTests: XCTestCase {
    private func everyRendering(of value: Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return [String(describing: value), String(reflecting: value), "\(value)", dumped]
    }

    func testAnAuthenticatorEnrollmentPrintsWithoutItsSecret() throws {
        let json = #"{"secret":"MJZRD5MIN4KEXLNC3WE4D7TS2GAJX6SQ","uri":"otpauth://totp/Latchkey:demo?secret=MJZRD5MIN4KEXLNC3WE4D7TS2GAJX6SQ"}"#
        let enrollment = try JSONDecoder().decode(AuthenticatorEnrollment.self, from: Data(json.utf8))
        XCTAssertEqual(enrollment.secret, "MJZRD5MIN4KEXLNC3WE4D7TS2GAJX6SQ")
        for text in everyRendering(of: enrollment) { XCTAssertFalse(text.contains("MJZRD5"), text) }
    }

    func testRecoveryCodesPrintWithoutTheCodes() throws {
        let json = #"{"codes":["6wawz-j5p7y","5nf38-vh470"]}"#
        let codes = try JSONDecoder().decode(LatchkeyClient.Identity.RecoveryCodes.Response.self, from: Data(json.utf8))
        XCTAssertEqual(codes.codes.count, 2)
        for text in everyRendering(of: codes) { XCTAssertFalse(text.contains("6wawz") || text.contains("5nf38"), text) }
    }

    func testAStoredSessionPrintsWithoutItsBearerToken() {
        let session = StoredSession(token: "lks_abcdefghijklmnop", sessionID: "ses_1", username: "demo", deviceID: "phone")
        for text in everyRendering(of: session) {
            XCTAssertFalse(text.contains("lks_abcdef"), text)
            XCTAssertTrue(text.contains("demo"), text)
        }
    }
}
