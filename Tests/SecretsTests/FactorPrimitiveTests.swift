import TestSupport
import Secrets
import XCTest

/// The primitives authenticator apps need: HMAC-SHA-1/-512 (RFC 6238 allows both besides
/// SHA-256), AES-256-GCM to keep their secrets at rest, Base32 to show them.
final class FactorPrimitiveTests: XCTestCase {
    // RFC 2202 test case 1 (SHA-1) and RFC 4231 test case 1 (SHA-256, SHA-512).
    func testHMACMatchesPublishedVectorsForEachAlgorithm() {
        let key = [UInt8](repeating: 0x0b, count: 20)
        XCTAssertEqual(HMACAlgorithm.sha1.authenticate(utf8("Hi There"), key: key), hex("b617318655057264e28bc0b6fb378c8ef146be00"))
        XCTAssertEqual(HMACAlgorithm.sha256.authenticate(utf8("Hi There"), key: key), HMACSHA256.authenticate(utf8("Hi There"), key: key))
        XCTAssertEqual(
            HMACAlgorithm.sha512.authenticate(utf8("Hi There"), key: key),
            hex("87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"))
    }

    // The GCM specification's test case 14: AES-256, zero key and nonce, one zero block.
    func testAESGCMOpensThePublishedTestCase() throws {
        let box = [UInt8](repeating: 0, count: 12) + hex("cea7403d4d606b6e074ec5d3baf39d18") + hex("d0d1c8a799996bf0265b98b5d48ab919")
        XCTAssertEqual(try AES256GCM.open(box, key: [UInt8](repeating: 0, count: 32), associatedData: []), [UInt8](repeating: 0, count: 16))
    }

    func testAESGCMRoundTripsAndRefusesAnyChange() throws {
        let key = SecureRandom.bytes(32)
        let secret = SecureRandom.bytes(20)
        let box = AES256GCM.seal(secret, key: key, associatedData: utf8("usr_alice"))
        XCTAssertEqual(box.count, 12 + 20 + 16)
        XCTAssertNotEqual(AES256GCM.seal(secret, key: key, associatedData: utf8("usr_alice")), box, "a fresh nonce per seal")
        XCTAssertEqual(try AES256GCM.open(box, key: key, associatedData: utf8("usr_alice")), secret)
        XCTAssertThrowsError(try AES256GCM.open(box, key: key, associatedData: utf8("usr_mallory")), "bound to its row")
        XCTAssertThrowsError(try AES256GCM.open(box, key: SecureRandom.bytes(32), associatedData: utf8("usr_alice")), "another key")
        for index in [0, 12, box.count - 1] {
            var altered = box
            altered[index] ^= 1
            XCTAssertThrowsError(try AES256GCM.open(altered, key: key, associatedData: utf8("usr_alice")), "byte \(index) altered")
        }
        XCTAssertThrowsError(try AES256GCM.open(Array(box.prefix(27)), key: key, associatedData: utf8("usr_alice")), "too short")
    }

    // RFC 4648 section 10, without padding (as otpauth URIs carry it).
    func testBase32MatchesRFC4648() {
        let vectors = ["": "", "f": "MY", "fo": "MZXQ", "foo": "MZXW6", "foob": "MZXW6YQ", "fooba": "MZXW6YTB", "foobar": "MZXW6YTBOI"]
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base32.encode(utf8(plain)), encoded)
            XCTAssertEqual(Base32.decode(encoded), utf8(plain))
            XCTAssertEqual(Base32.decode(encoded.lowercased()), utf8(plain))
        }
        XCTAssertEqual(Base32.decode("MZXW6YTBOI======"), utf8("foobar"))
        XCTAssertNil(Base32.decode("MZXW1"), "1 is not in the alphabet")
    }
}
