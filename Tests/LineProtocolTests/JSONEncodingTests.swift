import TestSupport
import XCTest

@testable import LineProtocol

final class JSONEncodingTests: XCTestCase {
    func testEncodingIsCompactWithSortedKeys() {
        let value: JSON = ["b": [1, true, nil], "a": ["z": "x", "m": 2.5], "c": .object([:]), "d": []]
        XCTAssertEqual(value.text, #"{"a":{"m":2.5,"z":"x"},"b":[1,true,null],"c":{},"d":[]}"#)
    }

    func testIntegersEncodeExactly() {
        XCTAssertEqual(JSON.int(0).text, "0")
        XCTAssertEqual(JSON.int(-7).text, "-7")
        XCTAssertEqual(JSON.int(Int64.max).text, "9223372036854775807")
        XCTAssertEqual(JSON.int(Int64.min).text, "-9223372036854775808")
    }

    func testStringsAreEscapedPerRFC8259() {
        XCTAssertEqual(JSON.string("a\"b\\c/d").text, #""a\"b\\c/d""#)
        XCTAssertEqual(JSON.string("\n\r\t\u{8}\u{C}").text, #""\n\r\t\b\f""#)
        XCTAssertEqual(JSON.string("\u{0}\u{1}\u{1F}\u{7F}").text, "\"\\u0000\\u0001\\u001f\u{7F}\"")
        XCTAssertEqual(JSON.string("é€😀").encoded(), [0x22] + Array("é€😀".utf8) + [0x22], "non-ASCII stays UTF-8")
    }

    func testDoublesUseShortestRoundTripForm() throws {
        XCTAssertEqual(JSON.double(0.1).text, "0.1")
        XCTAssertEqual(JSON.double(2.5).text, "2.5")
        for value in [1.0, 1e20, 1e-7, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude, -0.0, 123456.789] {
            let text = JSON.double(value).encoded()
            XCTAssertEqual(try JSONParser.parse(text), .double(value), "\(value) encoded as \(String(decoding: text, as: UTF8.self))")
        }
    }

    func testNonFiniteDoublesEncodeAsNull() {
        XCTAssertEqual(JSON.double(.infinity).text, "null")
        XCTAssertEqual(JSON.double(-.infinity).text, "null")
        XCTAssertEqual(JSON.double(.nan).text, "null")
        XCTAssertEqual(JSON.array([.double(.nan)]).text, "[null]")
    }

    func testAppendAddsToAnExistingBuffer() {
        var buffer = Array("x=".utf8)
        JSON.array([1, "a"]).append(to: &buffer)
        XCTAssertEqual(String(decoding: buffer, as: UTF8.self), #"x=[1,"a"]"#)
    }

    func testSpecialValuesRoundTrip() throws {
        let value: JSON = [
            "escapes": "\"\\\u{0}\u{1F}\n", "emoji": "😀", "min": .int(Int64.min), "max": .int(Int64.max),
            "tiny": .double(.leastNonzeroMagnitude), "big": 1.7976931348623157e308, "nested": [[[["deep": nil]]]], "": "",
        ]
        XCTAssertEqual(try JSONParser.parse(value.encoded()), value)
    }

    func testRandomValuesRoundTripThroughEncodeAndParse() throws {
        var generator = SeededGenerator(seed: 0x1A7C_4E11)
        for iteration in 0..<2_000 {
            let value = randomJSON(depth: 0, using: &generator)
            let encoded = value.encoded()
            let parsed = try JSONParser.parse(encoded, limits: JSONLimits(maxBytes: 1 << 24))
            XCTAssertEqual(parsed, value, "iteration \(iteration): \(value.text)")
            XCTAssertEqual(parsed.encoded(), encoded, "encoding is deterministic, iteration \(iteration)")
        }
    }

    /// A log line's members come from several sources and may repeat a key: the list must encode
    /// byte for byte as the dictionary that merging it in order makes, later members winning.
    func testAMergedMemberListEncodesAsTheDictionaryItMakes() {
        XCTAssertEqual(JSON.encodedObject(merging: []), bytes("{}"))
        XCTAssertEqual(
            JSON.encodedObject(merging: [("b", 1), ("a", "first"), ("a.b", true), ("a", "second"), ("ab", nil)]),
            bytes(#"{"a":"second","a.b":true,"ab":null,"b":1}"#))
        var generator = SeededGenerator(seed: 0x10_6E_11)
        for iteration in 0..<2_000 {
            // Few distinct keys, so that many lists repeat some of them, some three times or more.
            let keys = (0..<Int.random(in: 1...6, using: &generator)).map { _ in randomString(using: &generator) }
            let members: [(key: String, value: JSON)] = (0..<Int.random(in: 0...16, using: &generator)).map { _ in
                (keys.randomElement(using: &generator)!, randomJSON(depth: 2, using: &generator))
            }
            let merged = Dictionary(members, uniquingKeysWith: { _, later in later })
            let encoded = JSON.encodedObject(merging: members)
            guard encoded == JSON.object(merged).encoded() else {
                return XCTFail("iteration \(iteration): \(members.map { "\($0.key)=\($0.value.text)" }) gave \(String(decoding: encoded, as: UTF8.self))")
            }
        }
    }

    private func randomJSON(depth: Int, using generator: inout SeededGenerator) -> JSON {
        let choice = Int.random(in: 0..<(depth < 4 ? 8 : 6), using: &generator)
        switch choice {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .int(Int64.random(in: Int64.min...Int64.max, using: &generator) >> Int64.random(in: 0...63, using: &generator))
        case 3:
            let double = Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &generator))
            return .double(double.isFinite ? double : Double.random(in: -1e6...1e6, using: &generator))
        case 4, 5: return .string(randomString(using: &generator))
        case 6:
            let count = Int.random(in: 0...5, using: &generator)
            return .array((0..<count).map { _ in randomJSON(depth: depth + 1, using: &generator) })
        default:
            var members: [String: JSON] = [:]
            for _ in 0..<Int.random(in: 0...5, using: &generator) {
                members[randomString(using: &generator)] = randomJSON(depth: depth + 1, using: &generator)
            }
            return .object(members)
        }
    }

    private func randomString(using generator: inout SeededGenerator) -> String {
        let pool: [Unicode.Scalar] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\r", "\t", "\u{0}", "\u{1F}", "\u{7F}",
            "é", "€", "\u{FFFF}", "\u{10000}", "😀", "\u{10FFFF}", "\u{2028}"]
        var string = ""
        for _ in 0..<Int.random(in: 0...12, using: &generator) {
            string.unicodeScalars.append(pool.randomElement(using: &generator)!)
        }
        return string
    }
}
