import TestSupport
import WebAuthn
import XCTest

final class CBORDecoderTests: XCTestCase {
    private func decoded(_ text: String, limits: CBORLimits = .default, file: StaticString = #filePath, line: UInt = #line) -> CBOR? {
        do {
            return try CBORDecoder.decode(hex(text), limits: limits)
        } catch {
            XCTFail("\(text): \(error)", file: file, line: line)
            return nil
        }
    }

    private func refusal(_ bytes: [UInt8], limits: CBORLimits = .default) -> CBORError? {
        do {
            _ = try CBORDecoder.decode(bytes, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    private func assertRefused(
        _ text: String, _ kind: CBORError.Kind, limits: CBORLimits = .default, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(refusal(hex(text), limits: limits)?.kind, kind, text, file: file, line: line)
    }

    // MARK: Major types (RFC 8949 Appendix A where it has them)

    func testUnsignedIntegersOfEveryWidth() {
        let vectors: [(String, UInt64)] = [
            ("00", 0), ("01", 1), ("17", 23), ("1818", 24), ("18ff", 255), ("190100", 256), ("1903e8", 1000),
            ("1a000f4240", 1_000_000), ("1b000000e8d4a51000", 1_000_000_000_000), ("1bffffffffffffffff", UInt64.max),
        ]
        for (text, value) in vectors { XCTAssertEqual(decoded(text), .unsigned(value), text) }
        XCTAssertEqual(decoded("1801"), .unsigned(1), "a longer than needed argument is accepted")
        XCTAssertEqual(decoded("1bffffffffffffffff")?.integer, nil, "above Int64.max")
    }

    func testNegativeIntegersDownToInt64Min() {
        let vectors: [(String, Int64)] = [
            ("20", -1), ("29", -10), ("37", -24), ("3818", -25), ("3863", -100), ("3903e7", -1000), ("3a7fffffff", -2_147_483_648),
            ("3b7fffffffffffffff", Int64.min),
        ]
        for (text, value) in vectors {
            XCTAssertEqual(decoded(text), .negative(value), text)
            XCTAssertEqual(decoded(text)?.integer, value, text)
        }
        assertRefused("3b8000000000000000", .negativeOutOfRange)
        assertRefused("3bffffffffffffffff", .negativeOutOfRange)
    }

    func testByteAndTextStrings() {
        XCTAssertEqual(decoded("40"), .bytes([]))
        XCTAssertEqual(decoded("4401020304"), .bytes([1, 2, 3, 4]))
        XCTAssertEqual(decoded("5818" + String(repeating: "ab", count: 24)), .bytes([UInt8](repeating: 0xAB, count: 24)))
        let texts: [(String, String)] = [
            ("60", ""), ("6161", "a"), ("6449455446", "IETF"), ("62225c", "\"\\"), ("62c3bc", "\u{00fc}"), ("63e6b0b4", "\u{6c34}"),
            ("64f0908591", "\u{10151}"), ("6100", "\u{0}"),
        ]
        for (text, value) in texts { XCTAssertEqual(decoded(text), .text(value), text) }
    }

    func testInvalidUTF8IsRefused() {
        // A lone continuation byte, a cut sequence, an overlong NUL, a surrogate, beyond U+10FFFF.
        for text in ["61ff", "6180", "62c328", "62c080", "63eda080", "64f4908080"] { assertRefused(text, .invalidUTF8) }
    }

    func testArraysAndMaps() throws {
        XCTAssertEqual(decoded("80"), .array([]))
        XCTAssertEqual(decoded("83010203"), .array([1, 2, 3]))
        XCTAssertEqual(decoded("8301820203820405"), .array([1, .array([2, 3]), .array([4, 5])]))
        let twentyFive = CBOREncoder.head(4, 25) + (1...25).flatMap { CBOREncoder.head(0, UInt64($0)) }
        XCTAssertEqual(try CBORDecoder.decode(twentyFive), .array((1...25).map { CBOR.unsigned(UInt64($0)) }))
        XCTAssertEqual(decoded("a0"), map([]))
        XCTAssertEqual(decoded("a201020304"), map([(1, 2), (3, 4)]))
        XCTAssertEqual(decoded("a26161016162820203"), map([("a", 1), ("b", .array([2, 3]))]))
        XCTAssertEqual(decoded("a2026161016162")?.mapEntries?.map(\.key), [2, 1], "entries keep their order")
    }

    func testFalseTrueAndNull() {
        XCTAssertEqual(decoded("f4"), .bool(false))
        XCTAssertEqual(decoded("f5"), .bool(true))
        XCTAssertEqual(decoded("f6"), .null)
        XCTAssertEqual(decoded("83f4f5f6"), .array([.bool(false), .bool(true), .null]))
    }

    func testOtherSimpleValuesAreRefused() {
        for text in ["f7", "e0", "f0", "f3", "f818", "f8ff"] { assertRefused(text, .unsupportedSimpleValue) }
    }

    func testFloatsAreRefused() {
        for text in ["f90000", "f93c00", "fa47c35000", "fb3ff199999999999a", "81f97e00"] { assertRefused(text, .float) }
    }

    func testTagsAreRefused() {
        for text in ["c074323031332d30332d32315432303a30343a30305a", "c11a514b67b0", "d82076687474703a2f2f7777772e6578616d706c652e636f6d", "c249010000000000000000", "d9d9f700"] {
            assertRefused(text, .tag)
        }
        assertRefused("a101c000", .tag)
    }

    func testIndefiniteLengthsAndBreaksAreRefused() {
        for text in ["5f42010243030405ff", "7f657374726561646d696e67ff", "9fff", "9f018202039f0405ffff", "bf61610161629f0203ffff", "ff", "81ff"] {
            assertRefused(text, .indefiniteLength)
        }
    }

    func testReservedAdditionalInformationIsRefused() {
        for major in 0..<8 where major != 6 {
            for info in 28...30 { XCTAssertEqual(refusal([UInt8(major << 5 | info)])?.kind, .reservedAdditionalInfo, "\(major), \(info)") }
        }
        assertRefused("1f", .reservedAdditionalInfo)
        assertRefused("3f", .reservedAdditionalInfo)
    }

    // MARK: Maps' keys

    func testDuplicateKeysAreRefusedByValue() {
        assertRefused("a2010001f5", .duplicateMapKey)
        assertRefused("a20100180100", .duplicateMapKey)  // 1, then 1 in two bytes
        assertRefused("a261610061610a", .duplicateMapKey)
        assertRefused("a2200139000001", .duplicateMapKey)  // -1, then -1 in three bytes
        XCTAssertEqual(decoded("a2010020f5")?.mapEntries?.count, 2, "1 and -1 differ")
        XCTAssertEqual(decoded("a20100610100")?.mapEntries?.count, 2, "1 and \"\\u{1}\" differ")
        // "é" precomposed and decomposed are equal as Swift strings but are different keys.
        XCTAssertEqual(decoded("a262c3a9006365cc8101")?.mapEntries?.count, 2)
        XCTAssertEqual(refusal(hex("a2010001f5"))?.offset, 3, "the offset is the repeated key's")
    }

    func testOnlyIntegerAndTextKeysAreAccepted() {
        for text in ["a14000", "a1800000", "a1a00000", "a1f400", "a1f600", "a1820102f6"] { assertRefused(text, .invalidMapKey) }
    }

    func testLookUpByIntegerAndTextKey() throws {
        let value = try XCTUnwrap(decoded("a4 01 02 03 26 20 01 63 666d74 646e6f6e65"))
        XCTAssertEqual(value[1], 2)
        XCTAssertEqual(value[3], -7)
        XCTAssertEqual(value[-1], 1)
        XCTAssertEqual(value["fmt"], "none")
        XCTAssertNil(value[2])
        XCTAssertNil(value["Fmt"])
        XCTAssertNil(CBOR.array([1])[0], "not a map")
        let decomposed = try XCTUnwrap(decoded("a16365cc8101"))
        XCTAssertNil(decomposed["\u{e9}"], "text keys are matched byte for byte")
        XCTAssertEqual(decomposed["e\u{301}"], 1)
    }

    // MARK: Limits

    func testDepthLimit() {
        let sixteen = String(repeating: "81", count: 15) + "80"
        XCTAssertNotNil(decoded(sixteen))
        assertRefused("81" + sixteen, .tooDeep)
        assertRefused(String(repeating: "a101", count: 17) + "00", .tooDeep)
        XCTAssertNotNil(decoded(String(repeating: "a101", count: 16) + "00"))
        let flat = CBORLimits(maxDepth: 0)
        XCTAssertEqual(decoded("01", limits: flat), 1)
        assertRefused("80", .tooDeep, limits: flat)
    }

    func testItemLimitForArraysAndMaps() {
        XCTAssertEqual(decoded("990100" + String(repeating: "00", count: 256))?.array?.count, 256)
        assertRefused("990101" + String(repeating: "00", count: 257), .tooManyItems)
        let pairs = (0..<257).map { CBOREncoder.head(0, UInt64($0)) + [0xF6] }
        XCTAssertEqual(refusal(CBOREncoder.head(5, 257) + pairs.joined())?.kind, .tooManyItems)
        XCTAssertEqual(try CBORDecoder.decode(CBOREncoder.head(5, 256) + pairs.prefix(256).joined()).mapEntries?.count, 256)
        // Counts far past the input are refused before anything is allocated for them.
        assertRefused("9bffffffffffffffff", .tooManyItems)
        assertRefused("bb7fffffffffffffff", .tooManyItems)
        assertRefused("8301", .truncated, limits: CBORLimits(maxItems: 3))
        assertRefused("8401020304", .tooManyItems, limits: CBORLimits(maxItems: 3))
    }

    func testStringLimit() throws {
        let limit = CBORLimits.default.maxStringBytes
        XCTAssertEqual(limit, 16 * 1024)
        XCTAssertEqual(try CBORDecoder.decode(CBOREncoder.head(2, UInt64(limit)) + [UInt8](repeating: 7, count: limit)).bytes?.count, limit)
        XCTAssertEqual(refusal(CBOREncoder.head(2, UInt64(limit + 1)) + [UInt8](repeating: 7, count: limit + 1))?.kind, .stringTooLong)
        XCTAssertEqual(refusal(CBOREncoder.head(3, UInt64(limit + 1)) + [UInt8](repeating: 0x61, count: limit + 1))?.kind, .stringTooLong)
        assertRefused("5bffffffffffffffff", .stringTooLong)
        assertRefused("7b0000000100000000", .stringTooLong)
    }

    func testInputLimit() {
        let limit = CBORLimits.default.maxInputBytes
        XCTAssertEqual(limit, 64 * 1024)
        XCTAssertEqual(refusal([UInt8](repeating: 0, count: limit))?.kind, .trailingBytes, "the limit itself is accepted")
        XCTAssertEqual(refusal([UInt8](repeating: 0, count: limit + 1))?.kind, .inputTooLong)
        XCTAssertEqual(refusal(hex("4401020304"), limits: CBORLimits(maxInputBytes: 4))?.kind, .inputTooLong)
    }

    // MARK: Framing

    func testTrailingBytesAreRefusedAndPrefixesMeasured() throws {
        assertRefused("0000", .trailingBytes)
        XCTAssertEqual(refusal(hex("820102ff"))?.offset, 3)
        let (value, byteCount) = try CBORDecoder.decodePrefix(hex("a10102 deadbeef")[...])
        XCTAssertEqual(value, map([(1, 2)]))
        XCTAssertEqual(byteCount, 3)
    }

    func testSlicesDecodeFromTheirOwnStart() throws {
        let bytes = hex("ff ff 83 01 02 03 ff")
        XCTAssertEqual(try CBORDecoder.decode(bytes[2..<6]), .array([1, 2, 3]))
        let (value, byteCount) = try CBORDecoder.decodePrefix(bytes[2...])
        XCTAssertEqual(value, .array([1, 2, 3]))
        XCTAssertEqual(byteCount, 4)
        XCTAssertEqual(refusal(Array(bytes[2...])), CBORError(.trailingBytes, at: 4))
        XCTAssertThrowsError(try CBORDecoder.decode(bytes[2..<5])) { error in
            XCTAssertEqual(error as? CBORError, CBORError(.truncated, at: 3), "offsets count from the slice")
        }
    }

    func testEveryTruncationOfAValidInputIsRefused() {
        let value = map([
            ("fmt", "packed"),
            ("attStmt", map([("alg", -7), ("sig", .bytes([UInt8](repeating: 0x30, count: 70))), ("x5c", .array([.bytes([1, 2, 3])]))])),
            ("authData", .bytes([UInt8](repeating: 0xAA, count: 300))),
            ("flags", .array([.bool(true), .bool(false), .null, .unsigned(UInt64.max), .negative(Int64.min), "h\u{e9}"])),
        ])
        let bytes = CBOREncoder.encode(value)
        XCTAssertEqual(try CBORDecoder.decode(bytes), value)
        for length in 0..<bytes.count {
            XCTAssertEqual(refusal(Array(bytes.prefix(length)))?.kind, .truncated, "\(length) of \(bytes.count) bytes")
        }
    }

    func testEncodedValuesRoundTrip() throws {
        let values: [CBOR] = [
            0, 23, 24, .unsigned(UInt64.max), -1, -24, -25, .negative(Int64.min), .bytes([]), .bytes(Array(0...255)), "", "latchkey \u{1F511}",
            .array([]), .array([.array([.array([])])]), map([(1, 2), (-1, "x"), ("k", map([]))]), .bool(true), .bool(false), .null,
        ]
        for value in values { XCTAssertEqual(try CBORDecoder.decode(CBOREncoder.encode(value)), value, "\(value)") }
    }

    func testErrorsNameTheirKindAndOffset() {
        XCTAssertEqual(refusal(hex("8201"))?.description, "CBOR: input ends inside an item at byte 2")
    }
}
