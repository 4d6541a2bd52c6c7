import ServiceKit
import XCTest
@testable import Reset

/// Which link a reset mail carries, from configuration (the universal link is the
/// default once the HTTP door's public origin is configured).
final class LinkTemplateConfigurationTests: XCTestCase {
    private func template(_ environment: [String: String]) throws -> String {
        let configuration = try Configuration(arguments: [], environment: environment, options: ResetOptions.all)
        return try ResetOptions.linkTemplate(configuration)
    }

    func testTheAppSchemeIsTheDefault() throws {
        XCTAssertEqual(try template([:]), "latchkey://reset-password?token={token}")
    }

    func testAPublicOriginMakesTheUniversalLinkTheDefault() throws {
        XCTAssertEqual(try template(["LATCHKEY_PUBLIC_URL": "https://bank.example.com"]), "https://bank.example.com/reset?token={token}")
        XCTAssertEqual(
            try template(["LATCHKEY_PUBLIC_URL": "https://bank.example.com/", "LATCHKEY_AASA_PATHS": "/auth/reset*,/other"]),
            "https://bank.example.com/auth/reset?token={token}")
    }

    func testAnExplicitTemplateWins() throws {
        XCTAssertEqual(
            try template(["LATCHKEY_PUBLIC_URL": "https://bank.example.com", "LATCHKEY_RESET_LINK_TEMPLATE": "bank://r?t={token}"]),
            "bank://r?t={token}")
    }

    func testAPlainHTTPOrAPathOriginIsRefused() {
        XCTAssertThrowsError(try template(["LATCHKEY_PUBLIC_URL": "http://bank.example.com"]))
        XCTAssertThrowsError(try template(["LATCHKEY_PUBLIC_URL": "https://bank.example.com/app"]))
    }
}
