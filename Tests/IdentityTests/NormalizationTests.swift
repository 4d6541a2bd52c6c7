import XCTest

@testable import Identity

final class NormalizationTests: XCTestCase {
    func testUsernamesAreLowerCasedAndLimitedToASCII() throws {
        XCTAssertEqual(try Normalization.username("Alice"), "alice")
        XCTAssertEqual(try Normalization.username("j.doe_42-x"), "j.doe_42-x")
        for bad in ["ab", String(repeating: "a", count: 33), "_alice", ".alice", "al ice", "alicé", "аlice", "al@ice", ""] {
            XCTAssertThrowsError(try Normalization.username(bad), bad) { error in
                XCTAssertEqual((error as? IdentityError)?.rpcError.reason, .invalidParams)
            }
        }
    }

    func testEmailsAreTrimmedAndLowerCased() throws {
        XCTAssertEqual(try Normalization.email("  Alice.Smith+bank@Example.COM "), "alice.smith+bank@example.com")
        XCTAssertEqual(try Normalization.email("a@b.co"), "a@b.co")
        XCTAssertEqual(try Normalization.email("o'brien.j+x@mail.example.ie"), "o'brien.j+x@mail.example.ie")
        for bad in ["alice", "alice@", "@example.com", "a@b", "a@@b.com", "a b@example.com", "a@exa mple.com", "a@-x.com",
                    ".a@example.com", "a@example..com", "a..b@example.com", "a<b>@example.com", "a;b@example.com", "\"a\"@example.com", String(repeating: "a", count: 65) + "@example.com"] {
            XCTAssertThrowsError(try Normalization.email(bad), bad)
        }
    }

    func testUSNumbersWithoutCountryCodeBecomeE164() throws {
        let us = PhoneCountry.unitedStates
        XCTAssertEqual(try Normalization.phone("5555550100", defaultCountry: us), "+15555550100")
        XCTAssertEqual(try Normalization.phone("(555) 555-0100", defaultCountry: us), "+15555550100")
        XCTAssertEqual(try Normalization.phone("555.555.0100", defaultCountry: us), "+15555550100")
        XCTAssertEqual(try Normalization.phone("1 555 555 0100", defaultCountry: us), "+15555550100")
        XCTAssertEqual(try Normalization.phone("+1 (555) 555-0100", defaultCountry: us), "+15555550100")
        XCTAssertEqual(try Normalization.phone("+33 6 12 34 56 78", defaultCountry: us), "+33612345678")
        XCTAssertEqual(try Normalization.phone("0033 6 12 34 56 78", defaultCountry: us), "+33612345678")
    }

    func testOtherDefaultCountriesDropTheTrunkZero() throws {
        let france = try XCTUnwrap(PhoneCountry("fr"))
        XCTAssertEqual(try Normalization.phone("06 12 34 56 78", defaultCountry: france), "+33612345678")
        XCTAssertEqual(try Normalization.phone("+1 555 555 0100", defaultCountry: france), "+15555550100")
        XCTAssertNil(PhoneCountry("XX"))
    }

    func testBadPhoneNumbersAreRefused() {
        let us = PhoneCountry.unitedStates
        for bad in ["555-0100", "55555501000", "0555550100", "5550550100", "+1 155 555 0100", "phone", "+", "555 555 0100 ext 2",
                    "+1234567", "+1234567890123456", "5555550100+"] {
            XCTAssertThrowsError(try Normalization.phone(bad, defaultCountry: us), bad)
        }
    }

    func testDeviceIDs() throws {
        XCTAssertEqual(try Normalization.deviceID("6F9619FF-8B86-D011-B42D-00C04FC964FF"), "6F9619FF-8B86-D011-B42D-00C04FC964FF")
        for bad in ["", "a b", String(repeating: "x", count: 129), "dev/1", "dév"] {
            XCTAssertThrowsError(try Normalization.deviceID(bad), bad)
        }
    }
}
