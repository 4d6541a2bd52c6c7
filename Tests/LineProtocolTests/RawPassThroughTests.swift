import XCTest
@testable import LineProtocol
import TestSupport

/// What the gateway passes through without building it must be judged exactly as the parser
/// judges it: `RawJSON(validating:)` and `RawResponse.decode` accept what the parser accepts
/// (every rule: UTF-8, surrogates, duplicate keys, depth, numbers, string length), and a result
/// kept as bytes decodes to the value the general path builds.
final class RawPassThroughTests: XCTestCase {
    static let values: [String] = [
        #"{"pong":true}"#, #"{}"#, #"[]"#, #"{"b":1,"a":[1,2,{"c":null}]}"#, #""\u0041\u00e9\ud83d\ude00\n""#, #""é😀""#,
        "12345678901234567890123", "-0", "1E2", "2.50", "-1.5e-7", "1e400", "01", "1.", "-", "tru", "nul", "\"\u{7F}\"",
        #"{"a":1,"a":2}"#, #"{"a":1,"\u0061":2}"#, "{\"\u{E9}\":1,\"e\u{301}\":2}", #"{"a":{"a":1}}"#,
        #""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, #""\x""#, "\"\u{1}\"", "\"a", "[1,2,]", "[1 2]", #"{"a" 1}"#, "{1:2}",
        "[[[[[[[[1]]]]]]]]", "[1,[2,[3,[4]]]]", " 1", "1 ", "[1, 2]", "{\"a\":\t1}",
        "{" + (0..<20).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + #","k19":0}"#,
        "{" + (0..<20).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + "}",
    ]

    /// Invalid UTF-8 and overlong forms, which text literals cannot hold.
    static let byteValues: [[UInt8]] = [
        [0x22, 0xC3, 0x28, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],
        [0x22, 0xE2, 0x82, 0x22], [0x22, 0xFF, 0x22], [0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22],
    ]

    func testCheckingAcceptsExactlyWhatTheParserAccepts() {
        let limits = JSONLimits(maxDepth: 6, maxBytes: 4096, maxStringBytes: 8)
        var generator = SeededGenerator(seed: 19)
        let alphabet = Array(#"{}[]":,\ 0123456789-.eE+truefalsnu"#.utf8) + [0x80, 0xC3, 0xA9, 0xFF, 0x09]
        let seeds = Self.values.map { Array($0.utf8) } + Self.byteValues
        for seed in seeds {
            assertAgreement(seed, limits: .default)
            assertAgreement(seed, limits: limits)
        }
        for _ in 0..<30_000 {
            var input = seeds.randomElement(using: &generator)!
            for _ in 0..<Int.random(in: 1...3, using: &generator) where !input.isEmpty {
                let index = Int.random(in: 0..<input.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: input[index] = alphabet.randomElement(using: &generator)!
                case 1: input.remove(at: index)
                default: input.insert(alphabet.randomElement(using: &generator)!, at: index)
                }
            }
            assertAgreement(input, limits: Bool.random(using: &generator) ? .default : limits)
        }
    }

    /// The checker holds the first key apart, then a list, then a set: a repeat is refused
    /// whichever of them holds the key it repeats.
    func testTheCheckerRefusesARepeatedKeyWhereverTheFirstIsHeld() {
        func object(_ keys: [String]) -> ArraySlice<UInt8> {
            Array(("{" + keys.map { "\"\($0)\":1" }.joined(separator: ",") + "}").utf8)[...]
        }
        let many = (0..<20).map { "k\($0)" }
        for count in [1, 2, 16, 17, 18, 20] {
            let keys = Array(many.prefix(count))
            XCTAssertNotNil(RawJSON(validating: object(keys)), "\(count) distinct keys")
            for repeated in [keys.first!, keys.last!, keys[count / 2]] {
                XCTAssertNil(RawJSON(validating: object(keys + [repeated])), "\(count) keys, then \(repeated) again")
                // Keys are compared by their bytes while they are plain ASCII, decoded otherwise.
                let escaped = "\\u006b" + repeated.dropFirst()
                XCTAssertNil(RawJSON(validating: object(keys + [escaped])), "\(count) keys, then \(repeated) again, escaped")
                XCTAssertNil(RawJSON(validating: object(keys + ["\u{E9}", repeated])), "\(count) keys, then one beyond ASCII, then \(repeated)")
            }
            XCTAssertNil(RawJSON(validating: object(keys + ["\u{E9}", "e\u{301}"])), "canonically equal keys after \(count) plain ones")
            XCTAssertNotNil(RawJSON(validating: object(keys + ["\\u006a", "\u{E9}"])), "an escaped key and one beyond ASCII that repeat none")
        }
        XCTAssertNil(RawJSON(validating: Array(#"{"a":1,"\u0061":2}"#.utf8)[...]), "the same key escaped")
    }

    func testALongEscapedStringCountsItsDecodedBytesAgainstTheLimit() {
        let limits = JSONLimits(maxStringBytes: 4)
        XCTAssertNotNil(RawJSON(validating: Array(#""\u00e9\u00e9""#.utf8)[...], limits: limits), "4 bytes decoded")
        XCTAssertNil(RawJSON(validating: Array(#""\u00e9\u00e9a""#.utf8)[...], limits: limits), "5 bytes decoded")
        XCTAssertNil(RawJSON(validating: Array(#""\ud83d\ude00a""#.utf8)[...], limits: limits), "a surrogate pair is 4 bytes")
    }

    func testResponseLinesAgreeWithTheGeneralPathAndKeepTheServicesBytes() {
        var generator = SeededGenerator(seed: 1919)
        let lines = Self.values.map { #"{"jsonrpc":"2.0","id":7,"result":\#($0)}"# } + ResponseFastPathTests.seeds + [
            #"{"result":{"b":1,"a":2},"id":"x","jsonrpc":"2.0"}"#, #"{"jsonrpc":"2.0","id":1,"result": {"a" : 1}}"#,
            #"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"m","data":{"reason":"method_not_found"}}}"#,
            #"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#, #"{"jsonrpc":"2.0","id":1,"result":1,"result":1}"#,
        ]
        let alphabet = Array(#"{}[]":,\ 0123456789-.eE+truefalsnu"#.utf8) + [0x80, 0xC3, 0xA9]
        for line in lines { assertResponseAgreement(Array(line.utf8)) }
        for _ in 0..<20_000 {
            var input = Array(lines.randomElement(using: &generator)!.utf8)
            let index = Int.random(in: 0..<input.count, using: &generator)
            input[index] = alphabet.randomElement(using: &generator)!
            assertResponseAgreement(input)
        }
        let line = Array(#"{"jsonrpc":"2.0","id":7,"result":{"b":1,"a":"\u0041","n":1E2}}"#.utf8)
        XCTAssertEqual(
            RawResponse.decode(line: line, limits: .default)?.outcome, .success(RawJSON(checked: Array(#"{"b":1,"a":"\u0041","n":1E2}"#.utf8)[...])),
            "the result as the service wrote it")
    }

    /// The exact shape every service writes (`{"jsonrpc":"2.0","id":N,"result":V}`) is read
    /// without matching member names; at each edge of that shape both paths give one answer.
    func testResultAnswersInTheServicesOwnShapeAgreeAtEveryEdgeOfIt() throws {
        let edges = [
            "0", "00", "01", "7", "-1", "1.5", "1e2", "123456789012345678", "1234567890123456789", "99999999999999999999", #""7""#, "null",
        ].map { #"{"jsonrpc":"2.0","id":\#($0),"result":true}"# } + [
            #"{"jsonrpc":"2.0","id":7,"result":true }"#, #"{"jsonrpc":"2.0","id":7,"result": true}"#, #"{"jsonrpc":"2.0","id":7,"result":true}}"#,
            #"{"jsonrpc":"2.0","id":7,"result":true"#, #"{"jsonrpc":"2.0","id":7,"result":[1, 2]}"#, #"{"jsonrpc":"2.0","id":7,"result":{"a":1,"a":2}}"#,
            #"{"jsonrpc":"2.0","id":7,"result":1,"error":{"code":1,"message":"m"}}"#, #"{"jsonrpc":"2.0","id":7,"result":"\ud800"}"#,
            #"{"jsonrpc":"2.0","id":7,"result":[[[[1]]]]}"#, #"{"jsonrpc":"2.0","id":7,"result":}"#, #"{"jsonrpc":"2.0","id":7,"result"#,
        ]
        for line in edges {
            for limits in [JSONLimits.default, JSONLimits(maxDepth: 3), JSONLimits(maxBytes: 40)] {
                let input = Array(line.utf8)
                let fast = RawResponse.decode(line: input, limits: limits)
                let general = RawResponse.decodeInGeneral(line: input, limits: limits)
                XCTAssertEqual(fast?.id, general?.id, line)
                XCTAssertEqual(fast?.outcome.map { $0.decoded() }, general?.outcome.map { $0.decoded() }, line)
            }
        }
        let kept = try XCTUnwrap(RawResponse.decode(line: Array(#"{"jsonrpc":"2.0","id":123456789012345678,"result":{"b":1,"a":"\u0041"}}"#.utf8), limits: .default))
        XCTAssertEqual(kept.id, .int(123_456_789_012_345_678))
        XCTAssertEqual(kept.outcome, .success(RawJSON(checked: Array(#"{"b":1,"a":"\u0041"}"#.utf8)[...])), "the result as the service wrote it")
    }

    func testAResultWithSpacesIsEncodedAgainCompactAndAnEncodedReplyKeepsItsBytes() throws {
        let spaced = Array(#"{"jsonrpc":"2.0","id":1,"result":{"b" : [1, 2],"a":"x y"}}"#.utf8)
        let decoded = try XCTUnwrap(RawResponse.decode(line: spaced, limits: .default))
        XCTAssertEqual(decoded.outcome, .success(RawJSON(checked: Array(#"{"a":"x y","b":[1,2]}"#.utf8)[...])))
        var buffer: [UInt8] = []
        RPCReply.encodedResult(RawJSON(checked: Array(#"{"z":1,"a":"\/"}"#.utf8)[...])).append(id: "client-9", to: &buffer)
        XCTAssertEqual(String(decoding: buffer, as: UTF8.self), #"{"jsonrpc":"2.0","id":"client-9","result":{"z":1,"a":"\/"}}"#)
        var batch = BatchCollector(expecting: 2)
        XCTAssertNil(batch.add(id: 1, reply: .encodedResult(RawJSON(checked: Array("[1 ]".utf8)[...]))))
        let line = batch.add(id: 2, reply: .outcome(.failure(.methodNotFound("x.y"))))
        XCTAssertEqual(
            line.map { String(decoding: $0, as: UTF8.self) },
            #"[{"jsonrpc":"2.0","id":1,"result":[1 ]},{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"data":{"method":"x.y","reason":"method_not_found"},"message":"method not found"}}]"#)
    }

    private func assertAgreement(_ input: [UInt8], limits: JSONLimits, file: StaticString = #filePath, line: UInt = #line) {
        let parsed = try? JSONParser.parse(input, limits: limits)
        let checked = RawJSON(validating: input[...], limits: limits)
        let hasWhitespace = input.contains { [0x20, 0x09, 0x0A, 0x0D].contains($0) }
        if let checked {
            XCTAssertEqual(parsed, checked.decoded(), "checked but not parsed the same: \(input)", file: file, line: line)
        } else if parsed != nil && !hasWhitespace {
            XCTFail("parsed but refused by the checker: \(input)", file: file, line: line)
        }
        if let parsed {
            XCTAssertNotNil(RawJSON(validating: parsed.encoded()[...], limits: .default), "the encoder's output is compact", file: file, line: line)
        }
    }

    private func assertResponseAgreement(_ input: [UInt8], file: StaticString = #filePath, line: UInt = #line) {
        let fast = RawResponse.decode(line: input, limits: .default)
        let general = RawResponse.decodeInGeneral(line: input, limits: .default)
        XCTAssertEqual(fast == nil, general == nil, "input: \(input)", file: file, line: line)
        guard let fast, let general else { return }
        XCTAssertEqual(fast.id, general.id, file: file, line: line)
        switch (fast.outcome, general.outcome) {
        case (.success(let kept), .success(let encoded)):
            XCTAssertEqual(kept.decoded(), encoded.decoded(), "input: \(input)", file: file, line: line)
            XCTAssertFalse(kept.bytes.contains(0x0A), file: file, line: line)
        case (.failure(let left), .failure(let right)):
            XCTAssertEqual(left, right, file: file, line: line)
        default:
            XCTFail("one path answered a result, the other an error: \(input)", file: file, line: line)
        }
    }
}
