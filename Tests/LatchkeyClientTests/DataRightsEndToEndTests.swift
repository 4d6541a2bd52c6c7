import Foundation
import LatchkeyClient
import XCTest

/// The app's "Download my data" and "Delete my account" through the HTTP door.
final class DataRightsEndToEndTests: ClientStackTestCase {
    func testTheUserDownloadsTheirDataThenMoneyLeftRefusesTheDeletion() async throws {
        let phone = try client()
        try await signInWithCode(phone)
        let export = try await phone.exportData()
        XCTAssertEqual(export.format, 1)
        XCTAssertEqual(export.sessions.count, 1)
        guard case .object(let accounts)? = export.accounts, case .array(let balances)? = accounts["balances"] else {
            return XCTFail("no accounts part: \(String(describing: export.accounts))")
        }
        XCTAssertEqual(balances.count, 2)
        XCTAssertNotNil(export.verification)
        XCTAssertNotNil(export.reset)

        await XCTAssertThrowsLatchkeyError(.conflict(field: nil, detail: "balance_not_zero", status: nil)) {
            try await phone.deleteAccount(password: demoPassword)
        }
        XCTAssertTrue(phone.isSignedIn, "a refused deletion keeps the session")
        await XCTAssertThrowsLatchkeyError(.invalidCredentials) { try await phone.deleteAccount(password: "not the password") }
    }
}
