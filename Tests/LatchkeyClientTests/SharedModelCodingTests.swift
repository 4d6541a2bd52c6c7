import Foundation
import XCTest

@testable import LatchkeyClient

/// The types every service's calls share: open names travel as bare strings and keep names
/// this client does not know; every service's ping is the one `ServicePing`.
final class SharedModelCodingTests: XCTestCase {
    func testOpenNamesTravelAsBareStringsAndKeepUnknownNames() throws {
        let factors = try JSONDecoder().decode([Factor].self, from: Data(#"["sms","passkey"]"#.utf8))
        XCTAssertEqual(factors, [.sms, Factor(rawValue: "passkey")])
        XCTAssertEqual(String(decoding: try JSONEncoder().encode(factors), as: UTF8.self), #"["sms","passkey"]"#)
        XCTAssertEqual(try JSONDecoder().decode(AccountName.self, from: Data(#""external""#.utf8)), .external)
        XCTAssertEqual(try JSONDecoder().decode(HistoryEntryKind.self, from: Data(#""refund""#.utf8)).description, "refund")
        XCTAssertThrowsError(try JSONDecoder().decode(Factor.self, from: Data("7".utf8)), "a number is not a name")
    }

    /// Event ids are opaque strings, as the server seals them.
    func testAnActivityEventsIDIsAString() throws {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let line = #"{"event_id":"T-8cE7SdkBfOLtfQ_rcxXA","event":"login.succeeded","outcome":"success","at":1795969508,"device_id":null,"client":"127.0.0.1"}"#
        let event = try decoder.decode(ActivityEvent.self, from: Data(line.utf8))
        XCTAssertEqual(event.eventID, "T-8cE7SdkBfOLtfQ_rcxXA")
        XCTAssertEqual(event.at, Date(timeIntervalSince1970: 1_795_969_508))
        XCTAssertNil(event.deviceID)
    }

    func testEveryServicePingNamesItsServiceAndSendsAnEmptyBody() throws {
        let pings: [any LatchkeyRequest.Type] = [
            LatchkeyClient.Gateway.Ping.self, LatchkeyClient.Identity.Ping.self, LatchkeyClient.Verification.Ping.self,
            LatchkeyClient.Accounts.Ping.self, LatchkeyClient.Reset.Ping.self,
        ]
        XCTAssertEqual(pings.map { $0.method }, ["gateway.ping", "identity.ping", "verification.ping", "accounts.ping", "reset.ping"])
        XCTAssertTrue(pings.allSatisfy { $0.session == .none && $0.retry == .safe })
        XCTAssertEqual(String(decoding: try JSONEncoder().encode(LatchkeyClient.Reset.Ping()), as: UTF8.self), "{}")
        XCTAssertEqual(LatchkeyClient.Identity.Ping.path, "/v1/identity/ping")
    }

    func testTheMailLanguageOfADeviceLocaleIsOneTheServerWritesOrNone() throws {
        XCTAssertEqual(MailLanguage(locale: Locale(identifier: "fr_FR")), .french)
        XCTAssertEqual(MailLanguage(locale: Locale(identifier: "ru")), .russian)
        XCTAssertEqual(MailLanguage(locale: Locale(identifier: "en-GB")), .english)
        XCTAssertNil(MailLanguage(locale: Locale(identifier: "de_DE")), "German mails are English: nothing is sent")
        let body = try JSONEncoder().encode(LatchkeyClient.Identity.Preferences(locale: .russian))
        XCTAssertEqual(String(decoding: body, as: UTF8.self), #"{"locale":"ru"}"#)
    }
}
