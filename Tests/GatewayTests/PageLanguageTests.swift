import Contract
import XCTest

@testable import Gateway

/// The pages speak the languages the contract declares for the account's mails, and choose
/// among them as browsers ask.
final class PageLanguageTests: XCTestCase {
    func testThePagesOfferExactlyTheContractsLanguages() {
        XCTAssertEqual(PageLanguage.allCases.map(\.rawValue), Fields.mailLocales)
    }

    func testTheChoiceOnThePageWinsThenTheBrowsersBestRangeThenEnglish() {
        XCTAssertEqual(PageLanguage.of(acceptLanguage: "fr-CH, fr;q=0.9, en;q=0.8", chosen: nil), .fr)
        XCTAssertEqual(PageLanguage.of(acceptLanguage: "de, ru;q=0.5, fr;q=0.4", chosen: nil), .ru)
        XCTAssertEqual(PageLanguage.of(acceptLanguage: "fr;q=0, ru", chosen: nil), .ru)
        XCTAssertEqual(PageLanguage.of(acceptLanguage: "ru", chosen: "fr"), .fr)
        XCTAssertEqual(PageLanguage.of(acceptLanguage: "de, ja", chosen: "xx"), .en)
        XCTAssertEqual(PageLanguage.of(acceptLanguage: nil, chosen: nil), .en)
    }
}
