import Foundation
import ServiceKit
import XCTest

@testable import Verification

final class ConfigurationTests: XCTestCase {
    private func configuration(_ arguments: [String], _ environment: [String: String] = [:]) throws -> Configuration {
        try Configuration(arguments: arguments, environment: environment, options: CommonOptions.all + VerificationOptions.all)
    }

    func testSettingsFromFlagsAndEnvironment() throws {
        let settings = try VerificationSettings(replicaID: "v-1", configuration: try configuration(
            ["--brand", "Acme", "--verification-countries", "us, fr", "--verification-sends-per-number-10m", "2"],
            ["LATCHKEY_VERIFICATION_LOCALE": "ru", "LATCHKEY_VERIFICATION_MIN_NEXT_WAIT_S": "1"]))
        XCTAssertEqual(settings.brand, "Acme")
        XCTAssertEqual(settings.allowedCountries, ["US", "FR"])
        XCTAssertEqual(settings.perNumber.first, SendLimit(count: 2, windowSeconds: 600))
        XCTAssertEqual(settings.defaultLocale, .russian)
        XCTAssertEqual(settings.minimumNextWaitSeconds, 1)
        let defaults = try VerificationSettings(replicaID: "v-1", configuration: try configuration([]))
        XCTAssertNil(defaults.allowedCountries)
        XCTAssertEqual(defaults.publicWorkflow, .smsVoiceVoice)
        XCTAssertEqual(defaults.maxAttempts, 3)
    }

    func testBadSettingsAreRefusedAtStart() throws {
        XCTAssertThrowsError(try VerificationSettings(replicaID: "v", configuration: try configuration(["--verification-locale", "de"])))
        XCTAssertThrowsError(try VerificationSettings(replicaID: "v", configuration: try configuration(["--verification-public-workflow", "email"])))
        XCTAssertThrowsError(try VerificationSettings(replicaID: "v", configuration: try configuration(["--verification-countries", "USA"])))
        XCTAssertThrowsError(try VerificationSettings(replicaID: "v", configuration: try configuration(["--verification-min-next-wait-s", "0"])))
        // One brand rule on every service: accounts signs it into `service=<brand>`, so `=` and
        // control characters are refused here too, where it only reaches the message text.
        for brand in ["Ac=me", "Ac\u{07}me", "", String(repeating: "b", count: 33)] {
            XCTAssertThrowsError(try VerificationSettings(replicaID: "v", configuration: try configuration(["--brand", brand])), brand)
        }
    }

    func testServerKeyIsGeneratedOnceWithMode0600() throws {
        let directory = NSTemporaryDirectory() + "verification-key-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/verification.key"
        let first = try ServerKey.load(configuration: try configuration([]), keyFile: file)
        XCTAssertEqual(first.count, 32)
        XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        XCTAssertEqual(try ServerKey.load(configuration: try configuration([]), keyFile: file), first)
        let given = try ServerKey.load(configuration: try configuration(["--verification-key", String(repeating: "ab", count: 32)]), keyFile: file)
        XCTAssertEqual(given, Array(repeating: 0xab, count: 32))
        XCTAssertThrowsError(try ServerKey.load(configuration: try configuration(["--verification-key", "short"]), keyFile: file))
    }

    func testPhoneNumbers() {
        XCTAssertEqual(PhoneNumber("+1 (555) 555-0100")?.e164, "+15555550100")
        XCTAssertEqual(PhoneNumber("+15555550100")?.country, "US")
        XCTAssertEqual(PhoneNumber("+1 868 555 0100")?.country, "TT")
        XCTAssertEqual(PhoneNumber("+33612345678")?.country, "FR")
        XCTAssertEqual(PhoneNumber("+79123456789")?.country, "RU")
        XCTAssertNil(PhoneNumber("+0123456789"))
        XCTAssertNil(PhoneNumber("+1234"))
        XCTAssertNil(PhoneNumber("15555550100"))
        XCTAssertNil(PhoneNumber("+1555555010a"))
    }
}
