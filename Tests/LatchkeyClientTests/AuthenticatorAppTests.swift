import Foundation
import XCTest

/// The tests' authenticator app against RFC 6238 Appendix B (SHA-1) and RFC 4648's Base32
/// vectors, so a wrong code in the end-to-end tests is the server's, not the helper's.
final class AuthenticatorAppTests: XCTestCase {
    func testRFC6238SHA1Vectors() {
        let app = AuthenticatorApp(secret: Array("12345678901234567890".utf8))
        let vectors: [(seconds: UInt64, code: String)] = [
            (59, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"),
            (1_234_567_890, "89005924"), (2_000_000_000, "69279037"), (20_000_000_000, "65353130"),
        ]
        for vector in vectors {
            XCTAssertEqual(app.code(step: vector.seconds / 30, digits: 8), vector.code, "T = \(vector.seconds)")
        }
        XCTAssertEqual(app.code(step: 1), "287082", "six digits are the last six")
    }

    func testBase32DecodesRFC4648Vectors() {
        XCTAssertEqual(AuthenticatorApp.base32Decode("MZXW6YTBOI======").map { String(decoding: $0, as: UTF8.self) }, "foobar")
        XCTAssertEqual(AuthenticatorApp.base32Decode("mzxw6"), Array("foo".utf8))
        XCTAssertNil(AuthenticatorApp.base32Decode("MZXW1"), "1 is not in the alphabet")
    }
}
