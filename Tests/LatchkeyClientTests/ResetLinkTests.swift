import Foundation
import LatchkeyClient
import XCTest

/// The reset links the reset service can mail (`--reset-link-template` forms) and what is not one.
final class ResetLinkTests: XCTestCase {
    let token = "lkr_1k9JvH-XEMdMsMdcROrMQhEWLw-oGKRK4wi6v7vvPvM"

    func link(_ text: String) -> ResetLink? { URL(string: text).flatMap { ResetLink(url: $0) } }

    func testTheDeepLinkAndTheThreeUniversalLinkFormsGiveTheToken() {
        for text in [
            "latchkey://reset-password?token=\(token)",
            "mybank://reset-password?token=\(token)",
            "https://bank.example/reset?token=\(token)",
            "https://bank.example/reset/\(token)",
            "https://bank.example/reset#token=\(token)",
        ] {
            XCTAssertEqual(link(text)?.token, token, text)
        }
    }

    func testOtherLinksAreNotResetLinks() {
        for text in [
            "http://bank.example/reset?token=\(token)",  // a universal link is HTTPS only
            "https://bank.example/other?token=\(token)",
            "https://bank.example/reset/\(token)/more",
            "latchkey://login?token=\(token)",
            "latchkey://reset-password?code=\(token)",
            "latchkey://reset-password?token=lks_\(token.dropFirst(4))",  // a session token is not a reset token
            "latchkey://reset-password?token=lkr_",
            "latchkey://reset-password?token=lkr_a%2Fb",
        ] {
            XCTAssertNil(link(text), text)
        }
    }

    func testTheAppsOwnUniversalLinkPathsAreHonoured() throws {
        let url = try XCTUnwrap(URL(string: "https://bank.example/password/reset?token=\(token)"))
        XCTAssertNil(ResetLink(url: url))
        XCTAssertEqual(ResetLink(url: url, universalLinkPaths: ["/password/reset"])?.token, token)
    }
}
