import TestSupport
import Secrets
import XCTest

final class EncodingTests: XCTestCase {
    // RFC 4648 section 10.
    private let vectors: [(String, String)] = [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"),
        ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
    ]

    func testBase64URLEncodesRFC4648VectorsWithoutPadding() {
        for (plain, encoded) in vectors { XCTAssertEqual(Base64URL.encode(utf8(plain)), encoded) }
        XCTAssertEqual(Base64URL.encode([0xfb, 0xff]), "-_8")
    }

    func testBase64EncodesStandardAlphabetWithPadding() {
        XCTAssertEqual(Base64.encode(utf8("f")), "Zg==")
        XCTAssertEqual(Base64.encode(utf8("fo")), "Zm8=")
        XCTAssertEqual(Base64.encode(utf8("foobar")), "Zm9vYmFy")
        XCTAssertEqual(Base64.encode([0xfb, 0xff]), "+/8=")
    }

    func testBase64URLDecodeAcceptsBothAlphabetsWithOrWithoutPadding() {
        for (plain, encoded) in vectors { XCTAssertEqual(Base64URL.decode(encoded), utf8(plain)) }
        XCTAssertEqual(Base64URL.decode("Zg=="), utf8("f"))
        XCTAssertEqual(Base64URL.decode("Zm8="), utf8("fo"))
        XCTAssertEqual(Base64URL.decode("-_8"), [0xfb, 0xff])
        XCTAssertEqual(Base64URL.decode("+/8"), [0xfb, 0xff])
        XCTAssertEqual(Base64URL.decode("+/8="), [0xfb, 0xff])
    }

    func testBase64URLRoundTripsEveryLength() {
        for length in 0...70 {
            let bytes = SecureRandom.bytes(length)
            XCTAssertEqual(Base64URL.decode(Base64URL.encode(bytes)), bytes)
            XCTAssertEqual(Base64URL.decode(Base64.encode(bytes)), bytes)
        }
    }

    func testBase64URLDecodeRejectsMalformedInput() {
        let bad = [
            "Zm9v YmFy", "Zm9v\n", " Zm9v", "Zm9v\t", // whitespace
            "Zg=", "Zg===", "Zm9=", "=", "==", "Zm9vY===", // bad padding
            "Z", "Zm9vY",                                  // impossible lengths
            "Zh", "Zm9", "Zm9vYh",                          // non-zero unused bits
            "Zm9=v", "Zg==Zg==",                            // padding inside
            "Zm9v!", "Zm9v.", "Zm9vé", "Zm9v\0",            // foreign characters
            "+_8", "-/8",                                   // mixed alphabets
        ]
        for text in bad { XCTAssertNil(Base64URL.decode(text), "accepted \(text.debugDescription)") }
    }

    func testHexRoundTripsAndAcceptsBothCases() {
        let bytes: [UInt8] = [0x00, 0x01, 0x7f, 0x80, 0xab, 0xff]
        XCTAssertEqual(Hex.encode(bytes), "00017f80abff")
        XCTAssertEqual(Hex.decode("00017f80abff"), bytes)
        XCTAssertEqual(Hex.decode("00017F80ABFF"), bytes)
        XCTAssertEqual(Hex.decode(""), [])
    }

    func testHexDecodeRejectsOddLengthAndForeignCharacters() {
        for text in ["0", "abc", "0g", "0x00", " 00", "00 ", "zz"] {
            XCTAssertNil(Hex.decode(text), "accepted \(text.debugDescription)")
        }
    }
}
