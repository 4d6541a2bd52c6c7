import TestSupport
import Secrets
import XCTest

final class SecureRandomTests: XCTestCase {
    func testBytesHaveRequestedLengthAndDiffer() {
        XCTAssertEqual(SecureRandom.bytes(0), [])
        let a = SecureRandom.bytes(32), b = SecureRandom.bytes(32)
        XCTAssertEqual(a.count, 32)
        XCTAssertNotEqual(a, b)
    }

    func testUniformStaysInRangeAndHitsEveryValueOfSmallRange() {
        var seen = Set<UInt64>()
        for _ in 0..<2_000 {
            let value = SecureRandom.uniform(below: 7)
            XCTAssertLessThan(value, 7)
            seen.insert(value)
        }
        XCTAssertEqual(seen, Set(0..<7))
    }

    func testUniformHandlesEdgeBounds() {
        XCTAssertEqual(SecureRandom.uniform(below: 1), 0)
        for _ in 0..<100 {
            XCTAssertLessThan(SecureRandom.uniform(below: UInt64.max), UInt64.max)
            XCTAssertLessThan(SecureRandom.uniform(below: (1 << 63) + 1), (1 << 63) + 1)
        }
    }

    func testUniformIsRoughlyUnbiasedOverNonPowerOfTwoRange() {
        // 3 is the worst case for modulo bias on small draws; each bucket should hold ~1/3.
        var counts = [0, 0, 0]
        for _ in 0..<30_000 { counts[Int(SecureRandom.uniform(below: 3))] += 1 }
        for count in counts { XCTAssert((9_000...11_000).contains(count), "bucket count \(count)") }
    }

    func testDigitsHaveRequestedLengthAndOnlyDecimalCharacters() {
        XCTAssertEqual(SecureRandom.digits(0), "")
        for length in [1, 6, 8, 20] {
            let code = SecureRandom.digits(length)
            XCTAssertEqual(code.count, length)
            XCTAssertTrue(code.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        }
    }

    func testDigitsCoverAllTenValuesIncludingLeadingZero() {
        var seen = Set<Character>()
        for _ in 0..<500 { seen.insert(SecureRandom.digits(1).first!) }
        XCTAssertEqual(seen, Set("0123456789"))
    }
}

final class OpaqueTokenTests: XCTestCase {
    func testMakeProducesPrefixAnd43Base64URLCharacters() {
        let token = OpaqueToken.make(prefix: "lks_")
        XCTAssertTrue(token.hasPrefix("lks_"))
        XCTAssertEqual(token.utf8.count, 4 + 43)
        XCTAssertEqual(Base64URL.decode(String(token.dropFirst(4)))?.count, 32)
        XCTAssertTrue(OpaqueToken.isWellFormed(token, prefix: "lks_"))
        XCTAssertNotEqual(token, OpaqueToken.make(prefix: "lks_"))
    }

    func testIsWellFormedRejectsWrongPrefixLengthAlphabetAndPadding() {
        let token = OpaqueToken.make(prefix: "lkr_")
        let body = String(token.dropFirst(4))
        XCTAssertFalse(OpaqueToken.isWellFormed(token, prefix: "lks_"))
        XCTAssertFalse(OpaqueToken.isWellFormed(body, prefix: "lkr_"))
        XCTAssertFalse(OpaqueToken.isWellFormed("lkr_" + body.dropLast(), prefix: "lkr_"))
        XCTAssertFalse(OpaqueToken.isWellFormed(token + "A", prefix: "lkr_"))
        XCTAssertFalse(OpaqueToken.isWellFormed(token + "=", prefix: "lkr_"))
        XCTAssertFalse(OpaqueToken.isWellFormed("lkr_" + "+" + body.dropFirst(), prefix: "lkr_"))
        XCTAssertFalse(OpaqueToken.isWellFormed("lkr_" + " " + body.dropFirst(), prefix: "lkr_"))
        XCTAssertFalse(OpaqueToken.isWellFormed("", prefix: "lkr_"))
        // 43 characters whose last one carries non-zero unused bits: not a canonical encoding.
        XCTAssertFalse(OpaqueToken.isWellFormed("lkr_" + String(repeating: "A", count: 42) + "B", prefix: "lkr_"))
        XCTAssertTrue(OpaqueToken.isWellFormed("lkr_" + String(repeating: "A", count: 42) + "E", prefix: "lkr_"))
    }

    func testHashIsSHA256OfTheTokenUTF8() {
        let token = OpaqueToken.make(prefix: "lks_")
        XCTAssertEqual(OpaqueToken.hash(token), SHA256.hash(utf8(token)))
        XCTAssertEqual(OpaqueToken.hash("abc"),
                       hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
    }
}
