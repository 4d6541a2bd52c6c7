import TestSupport
import Secrets
import XCTest

final class DigestTests: XCTestCase {
    // FIPS 180-2, appendix B.1 and the empty message.
    func testSHA256OfABCMatchesFIPS180() {
        XCTAssertEqual(SHA256.hash("abc"), hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
        XCTAssertEqual(SHA256.hash(utf8("abc")), SHA256.hash("abc"))
    }

    func testSHA256OfEmptyStringMatchesKnownDigest() {
        XCTAssertEqual(SHA256.hash(""), hex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
        XCTAssertEqual(SHA256.hash([UInt8]()), SHA256.hash(""))
    }

    func testSHA256OfTwoBlockMessageMatchesFIPS180() {
        XCTAssertEqual(SHA256.hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
                       hex("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"))
    }

    // RFC 4231 section 4.
    func testHMACSHA256MatchesRFC4231Case1() {
        XCTAssertEqual(HMACSHA256.authenticate(utf8("Hi There"), key: [UInt8](repeating: 0x0b, count: 20)),
                       hex("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"))
    }

    func testHMACSHA256MatchesRFC4231Case2ShortKey() {
        XCTAssertEqual(HMACSHA256.authenticate(utf8("what do ya want for nothing?"), key: utf8("Jefe")),
                       hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
    }

    func testHMACSHA256MatchesRFC4231Case3() {
        XCTAssertEqual(HMACSHA256.authenticate([UInt8](repeating: 0xdd, count: 50),
                                               key: [UInt8](repeating: 0xaa, count: 20)),
                       hex("773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"))
    }

    func testHMACSHA256MatchesRFC4231Case4() {
        XCTAssertEqual(HMACSHA256.authenticate([UInt8](repeating: 0xcd, count: 50), key: Array(1...25)),
                       hex("82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"))
    }

    func testHMACSHA256MatchesRFC4231Case5TruncatedTo128Bits() {
        let tag = HMACSHA256.authenticate(utf8("Test With Truncation"), key: [UInt8](repeating: 0x0c, count: 20))
        XCTAssertEqual(Array(tag.prefix(16)), hex("a3b6167473100ee06e0c796c2955552b"))
    }

    func testHMACSHA256MatchesRFC4231Case6KeyLargerThanBlock() {
        XCTAssertEqual(HMACSHA256.authenticate(utf8("Test Using Larger Than Block-Size Key - Hash Key First"),
                                               key: [UInt8](repeating: 0xaa, count: 131)),
                       hex("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"))
    }

    func testHMACSHA256MatchesRFC4231Case7KeyAndDataLargerThanBlock() {
        let message = "This is a test using a larger than block-size key and a larger than block-size data. "
            + "The key needs to be hashed before being used by the HMAC algorithm."
        XCTAssertEqual(HMACSHA256.authenticate(utf8(message), key: [UInt8](repeating: 0xaa, count: 131)),
                       hex("9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"))
    }

    func testHMACSHA256AcceptsEmptyKeyAndMessage() {
        XCTAssertEqual(HMACSHA256.authenticate([], key: []),
                       hex("b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"))
    }

    func testConstantTimeEqualsComparesContentsAndLengths() {
        XCTAssertTrue(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        XCTAssertTrue(constantTimeEquals([], []))
        XCTAssertFalse(constantTimeEquals([1, 2, 3], [1, 2, 4]))
        XCTAssertFalse(constantTimeEquals([1, 2, 3], [1, 2]))
        XCTAssertFalse(constantTimeEquals([], [0]))
    }

    func testSecureWipeZeroesTheBuffer() {
        var secret: [UInt8] = Array(1...64)
        secureWipe(&secret)
        XCTAssertEqual(secret, [UInt8](repeating: 0, count: 64))
        var empty: [UInt8] = []
        secureWipe(&empty)
        XCTAssertEqual(empty, [])
    }
}
