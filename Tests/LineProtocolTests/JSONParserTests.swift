import XCTest

@testable import LineProtocol

final class JSONParserTests: XCTestCase {
    func testParsesScalarsAtTopLevel() throws {
        XCTAssertEqual(try parse("null"), .null)
        XCTAssertEqual(try parse("true"), .bool(true))
        XCTAssertEqual(try parse("false"), .bool(false))
        XCTAssertEqual(try parse("42"), .int(42))
        XCTAssertEqual(try parse("\"hi\""), .string("hi"))
        XCTAssertEqual(try parse(" \t\r\n1 \t\r\n"), .int(1))
    }

    func testParsesNestedContainers() throws {
        let value = try parse(#"{"a":[1,2.5,{"b":null}],"c":{},"d":[]}"#)
        XCTAssertEqual(value, ["a": [1, 2.5, ["b": nil]], "c": .object([:]), "d": []])
    }

    func testIntegersThatFitInt64StayExact() throws {
        XCTAssertEqual(try parse("9223372036854775807"), .int(Int64.max))
        XCTAssertEqual(try parse("-9223372036854775808"), .int(Int64.min))
        XCTAssertEqual(try parse("-0"), .int(0))
    }

    /// Integers of up to 18 digits are read in one pass, longer ones by the full grammar: the
    /// same values on both sides of that line, and wherever a number ends.
    func testIntegersOnBothSidesOfTheOnePassReadingStayExact() throws {
        XCTAssertEqual(try parse("999999999999999999"), .int(999_999_999_999_999_999))
        XCTAssertEqual(try parse("-999999999999999999"), .int(-999_999_999_999_999_999))
        XCTAssertEqual(try parse("1000000000000000000"), .int(1_000_000_000_000_000_000))
        XCTAssertEqual(try parse("-1000000000000000000"), .int(-1_000_000_000_000_000_000))
        XCTAssertEqual(try parse(#"[0,7,-3,123456789012345678]"#), [0, 7, -3, 123_456_789_012_345_678])
        XCTAssertEqual(try parse(#"{"a":42}"#), ["a": 42])
        XCTAssertEqual(try parse("123456789012345678.5"), .double(123456789012345678.5))
        XCTAssertEqual(try parse("12e1"), .double(120))
        XCTAssertEqual(try parse("0.5"), .double(0.5))
        for text in ["1-", "1 2", "0-1", "[1a]"] { XCTAssertNotNil(parseError(text), text) }
    }

    func testIntegersTooBigForInt64BecomeDoubles() throws {
        XCTAssertEqual(try parse("12345678901234567890"), .double(12345678901234567890.0))
        XCTAssertEqual(try parse("9223372036854775808"), .double(9223372036854775808.0))
        XCTAssertEqual(try parse("-9223372036854775809"), .double(-9223372036854775809.0))
    }

    func testFractionsAndExponentsBecomeDoubles() throws {
        XCTAssertEqual(try parse("1.5"), .double(1.5))
        XCTAssertEqual(try parse("1e2"), .double(100))
        XCTAssertEqual(try parse("1E+2"), .double(100))
        XCTAssertEqual(try parse("-2.5e-3"), .double(-0.0025))
        XCTAssertEqual(try parse("1.0"), .double(1.0))
        XCTAssertEqual(try parse("-0.0"), .double(-0.0))
        XCTAssertEqual(try parse("1e-400"), .double(0))
    }

    func testNumbersOverflowingToInfinityAreRefused() {
        XCTAssertEqual(parseError("1e400")?.message, "number out of range")
        XCTAssertEqual(parseError("-1e400")?.message, "number out of range")
        XCTAssertEqual(parseError("[0, 1" + String(repeating: "0", count: 400) + ".5]")?.message, "number out of range")
    }

    func testMalformedNumbersAreRefused() {
        for text in ["01", "-01", "00", "+1", "1.", ".5", "1e", "1e+", "-", "--1", "0x10", "1.e3", "NaN", "Infinity",
            "-Infinity", "[01]", "1_000"]
        {
            XCTAssertNotNil(parseError(text), text)
        }
    }

    func testStringEscapesAreDecoded() throws {
        XCTAssertEqual(try parse(#""a\"b\\c\/d\b\f\n\r\t""#), .string("a\"b\\c/d\u{8}\u{C}\n\r\t"))
        XCTAssertEqual(try parse(#""\u00e9\u20AC""#), .string("é€"))
    }

    func testSurrogatePairEscapesDecodeToOneScalar() throws {
        XCTAssertEqual(try parse(#""\ud83d\ude00""#), .string("😀"))
        XCTAssertEqual(try parse(#""x\uD834\uDD1Ey""#), .string("x𝄞y"))
    }

    func testLoneOrInvalidSurrogateEscapesAreRefused() {
        for text in [#""\ud83d""#, #""\ude00""#, #""\ud83dx""#, #""\ud83d\u0041""#, #""\ud83d\ud83d""#, #""\ude00\ud83d""#] {
            XCTAssertNotNil(parseError(text), text)
        }
    }

    func testInvalidEscapesAreRefused() {
        for text in [#""\a""#, #""\x41""#, #""\u12""#, #""\u12G4""#, #""\'""#, #""\"#] {
            XCTAssertNotNil(parseError(text), text)
        }
    }

    func testUnescapedControlCharactersInStringsAreRefused() {
        XCTAssertEqual(parseError([0x22, 0x61, 0x00, 0x62, 0x22])?.message, "unescaped control character in string")
        XCTAssertNotNil(parseError("\"a\nb\""))
        XCTAssertNotNil(parseError("\"a\tb\""))
        XCTAssertNotNil(parseError("\"\\n\u{1F}\""), "control character after an escape")
    }

    func testEscapedNulIsAccepted() throws {
        XCTAssertEqual(try parse(#""a\u0000b""#), .string("a\u{0}b"))
    }

    func testValidMultibyteUTF8IsAccepted() throws {
        XCTAssertEqual(try parse("\"é€😀\""), .string("é€😀"))
        XCTAssertEqual(try parse("\"\\n é€😀\""), .string("\n é€😀"))
        // Edges of the valid ranges: U+0080, U+07FF, U+0800, U+D7FF, U+E000, U+FFFF, U+10000, U+10FFFF.
        let edges: [[UInt8]] = [[0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF],
            [0xEE, 0x80, 0x80], [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF]]
        for edge in edges {
            XCTAssertNoThrow(try JSONParser.parse([0x22] + edge + [0x22]), "\(edge)")
        }
    }

    func testInvalidUTF8IsRefusedInAndOutOfStrings() {
        let invalid: [[UInt8]] = [
            [0x80],  // lone continuation byte
            [0xBF],
            [0xC0, 0x80],  // overlong NUL
            [0xC1, 0xBF],  // overlong
            [0xE0, 0x80, 0x80],  // overlong
            [0xE0, 0x9F, 0xBF],  // overlong
            [0xF0, 0x80, 0x80, 0x80],  // overlong
            [0xF0, 0x8F, 0xBF, 0xBF],  // overlong
            [0xED, 0xA0, 0x80],  // UTF-8 encoded surrogate U+D800
            [0xED, 0xBF, 0xBF],  // UTF-8 encoded surrogate U+DFFF
            [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
            [0xF5, 0x80, 0x80, 0x80],
            [0xFF], [0xFE],
            [0xC3],  // truncated
            [0xE2, 0x82],  // truncated
            [0xC3, 0x41],  // bad continuation
        ]
        for sequence in invalid {
            XCTAssertEqual(parseError([0x22] + sequence + [0x22])?.message, "invalid UTF-8", "\(sequence)")
            XCTAssertEqual(parseError([0x22, 0x5C, 0x6E] + sequence + [0x22])?.message, "invalid UTF-8", "\(sequence)")
            XCTAssertNotNil(parseError(sequence), "\(sequence) outside a string")
        }
    }

    func testDuplicateObjectKeysAreRefused() {
        XCTAssertEqual(parseError(#"{"a":1,"a":2}"#)?.message, "duplicate object key")
        XCTAssertEqual(parseError(#"{"a":1,"b":{"c":1,"c":1}}"#)?.message, "duplicate object key")
        // Same key once escaped and once not.
        XCTAssertEqual(parseError(#"{"a":1,"\u0061":2}"#)?.message, "duplicate object key")
    }

    func testTrailingGarbageIsRefused() {
        XCTAssertEqual(parseError("{} x")?.message, "unexpected data after the JSON value")
        XCTAssertNotNil(parseError("1 2"))
        XCTAssertNotNil(parseError("[1]]"))
        XCTAssertNotNil(parseError("nullx"))
    }

    func testOnlyJSONWhitespaceIsAllowed() {
        XCTAssertNotNil(parseError("\u{0C}1"), "form feed")
        XCTAssertNotNil(parseError("\u{0B}1"), "vertical tab")
        XCTAssertNotNil(parseError("\u{A0}1"), "no-break space")
        XCTAssertNotNil(parseError([0xEF, 0xBB, 0xBF, 0x31]), "byte order mark")
    }

    func testStructuralErrorsAreRefused() {
        for text in ["", " ", "[", "]", "{", "[1,]", "[,1]", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{a:1}", "{1:1}",
            "[1 2]", "{\"a\":1 \"b\":2}", "\"abc", "tru", "nul", "True", "'a'", "[1,2", "{\"a\":1"]
        {
            XCTAssertNotNil(parseError(text), text)
        }
    }

    func testNestingUpToTheDepthLimitIsAccepted() throws {
        let limits = JSONLimits(maxDepth: 3)
        XCTAssertNoThrow(try parse("[[[1]]]", limits: limits))
        XCTAssertNoThrow(try parse(#"{"a":{"b":[1]}}"#, limits: limits))
        XCTAssertEqual(parseError("[[[[1]]]]", limits: limits)?.message, "nesting deeper than the depth limit")
        XCTAssertEqual(parseError(#"{"a":{"b":[{}]}}"#, limits: limits)?.message, "nesting deeper than the depth limit")
        XCTAssertNoThrow(try parse(String(repeating: "[", count: 64) + String(repeating: "]", count: 64)))
        XCTAssertNotNil(parseError(String(repeating: "[", count: 65) + String(repeating: "]", count: 65)))
    }

    func testHundredThousandOpenBracketsAreRefusedFastWithoutRecursing() {
        let input = [UInt8](repeating: 0x5B, count: 100_000)
        let limits = JSONLimits(maxDepth: 64, maxBytes: 1_000_000)
        // Fast by count, not by clock: the error's offset shows the parser stopped at the 65th byte.
        let error = parseError(input, limits: limits)
        XCTAssertEqual(error, JSONParseError(message: "nesting deeper than the depth limit", offset: 64))
        let objects = [UInt8](String(repeating: #"{"a":"#, count: 100_000).utf8)
        XCTAssertEqual(parseError(objects, limits: JSONLimits(maxBytes: 10_000_000))?.message,
            "nesting deeper than the depth limit")
    }

    func testInputLongerThanMaxBytesIsRefused() {
        let limits = JSONLimits(maxBytes: 10)
        XCTAssertNoThrow(try parse("\"12345678\"", limits: limits))
        XCTAssertEqual(parseError("\"123456789\"", limits: limits)?.message, "input longer than the byte limit")
    }

    func testStringsLongerThanMaxStringBytesAreRefused() {
        let limits = JSONLimits(maxStringBytes: 3)
        XCTAssertNoThrow(try parse(#"["abc","\u00e9x"]"#, limits: limits))
        XCTAssertEqual(parseError(#""abcd""#, limits: limits)?.message, "string longer than the string limit")
        XCTAssertEqual(parseError(#""ab\nc""#, limits: limits)?.message, "string longer than the string limit")
        XCTAssertEqual(parseError(#"{"abcd":1}"#, limits: limits)?.message, "string longer than the string limit")
    }

    func testErrorMessagesNeverEchoInput() {
        let secret = "hunter2-SECRET"
        let inputs = ["{\"password\": \(secret)}", "\"\(secret)\u{1}\"", "[\"\(secret)\" \"\(secret)\"]",
            "{\"\(secret)\":1,\"\(secret)\":1}", "\"\\q\(secret)\""]
        for input in inputs {
            let error = parseError(input)
            XCTAssertNotNil(error, input)
            XCTAssertFalse(error?.message.contains("SECRET") ?? true, input)
            XCTAssertFalse(error?.description.contains("SECRET") ?? true, input)
        }
    }

    func testErrorOffsetPointsAtTheProblem() {
        XCTAssertEqual(parseError("[1,x]")?.offset, 3)
        XCTAssertEqual(parseError(#"{"a":1,"a":2}"#)?.offset, 7)
    }

    func testGenericCollectionsParseLikeArrays() throws {
        let text = #"{"a":[1,"é"]}"#
        let expected = try parse(text)
        XCTAssertEqual(try JSONParser.parse(text.utf8), expected)
        XCTAssertEqual(try JSONParser.parse(ArraySlice(bytes("  " + text))[2...]), expected)
        XCTAssertEqual(try JSONParser.parse(text), expected)
        XCTAssertEqual(try JSONParser.parse(AnyCollection(bytes(text))), expected)
    }
}
