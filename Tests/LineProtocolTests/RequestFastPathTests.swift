import TestSupport
import XCTest
@testable import LineProtocol

/// The fast path for the common request line (no envelope dictionary) must answer exactly as the
/// general parser does for every input: the same request, the same refusal, the same error offset.
/// Hand-picked edge cases, then many random mutations of them.
final class RequestFastPathTests: XCTestCase {
    static let seeds: [String] = [
        #"{"jsonrpc":"2.0","id":1,"method":"gateway.ping"}"#,
        #" { "jsonrpc" : "2.0" , "method" : "a.b" , "params" : {"x":[1,2,{"y":null}]} , "id" : "s" , "meta" : {"client":"c"} } "#,
        #"{"jsonrpc":"2.0","id":1,"method":"a","id":2}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"a","extra":true}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"a","params":{"k":1,"k":2}}"#,
        #"{"json\u0072pc":"2.0","id":1,"method":"a"}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"a","params":"\ud800"}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"a","params":["\ud83d\ude00"]}"#,
        #"{"jsonrpc":"2.0","id":[1],"method":"a"}"#,
        #"{"jsonrpc":"1.0","id":1,"method":"a"}"#,
        #"{"jsonrpc":"2.0","id":1,"method":7}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"a","params":3}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"a","meta":[1]}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"a"} x"#,
        #"{"jsonrpc":"2.0","id":1,"method":"a""#,
        #"{}"#,
        #"[{"jsonrpc":"2.0","id":1,"method":"a"}]"#,
        #"{"jsonrpc":"2.0","id":1e400,"method":"a"}"#,
        #"{"jsonrpc":"2.0","id":-0,"method":"a","params":[[[[[[[[1]]]]]]]]}"#,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\u{E9}\"}",
        // `meta`, read into its fields on the fast path: every member, each rule the general path judges.
        #"{"jsonrpc":"2.0","id":1,"method":"a","meta":{"client":"10.0.0.1","request_id":"gw-1.2","budget_ms":500,"token":"t"}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"a","meta":{"client":"a","client":"b"}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"a","meta":{"client":"a"},"meta":{"client":"b"}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"a","meta":{"cl\u0069ent":"c","budget_ms":1.5,"token":7}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"a","meta":{"other":{"x":[1]},"request_id":null,"budget_ms":-3}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"a","meta":{"client":"\ud800"}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"a","meta":{ "token" : "x" , }}"#,
        // Names tried in slot order first: a name that starts like, extends, repeats or skips the next one.
        #"{"jsonrp":"2.0","id":1,"method":"a"}"#,
        #"{"jsonrpcx":"2.0","id":1,"method":"a"}"#,
        #"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"a"}"#,
        #"{"jsonrpc":"2.0","method":"a","id":1}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"a","meta":{"client":"c","budget_ms":5,"request_id":"r"}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"a","meta":{"client":"c","request_id":"r","request_id":"s"}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"a","meta":{"client":"c","request_i"#,
    ]

    func testFastPathAgreesWithTheGeneralParserOnEdgeCases() {
        for seed in Self.seeds { assertAgreement(Array(seed.utf8)) }
        // Invalid UTF-8 inside a key and a value, and a depth limit reached inside params.
        assertAgreement(Array(#"{"jsonrpc":"2.0","id":1,"method":"a"#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8))
        assertAgreement(Array(#"{"meth"#.utf8) + [0xED, 0xA0, 0x80] + Array(#"od":"a"}"#.utf8))
        assertAgreement(Array(#"{"jsonrpc":"2.0","id":1,"method":"a","params":[[1]]}"#.utf8), limits: JSONLimits(maxDepth: 2))
        assertAgreement(Array(#"{"jsonrpc":"2.0","id":1,"method":"a"}"#.utf8), limits: JSONLimits(maxDepth: 0))
        assertAgreement(Array(#"{"jsonrpc":"2.0","id":1,"method":"a"}"#.utf8), limits: JSONLimits(maxBytes: 10))
        assertAgreement(Array(#"{"jsonrpc":"2.0","id":1,"method":"abcdef"}"#.utf8), limits: JSONLimits(maxStringBytes: 4))
        // A member name is a string under the same limit, though matched without building one.
        assertAgreement(Array(#"{"jsonrpc":"2.0","id":1,"method":"a"}"#.utf8), limits: JSONLimits(maxStringBytes: 6))
        assertAgreement(Array(#"{"jsonrpc":"2.0","id":1,"method":"a","meta":{}}"#.utf8))
        assertAgreement(Array(#"{"jsonrpc":"2.0","id":1,"method":"a","meta":{"client":"a"}}"#.utf8), limits: JSONLimits(maxDepth: 1))
        assertAgreement(Array(#"{"jsonrpc":"2.0","id":1,"method":"a","meta":{"budget_ms":[1]}}"#.utf8), limits: JSONLimits(maxDepth: 2))
    }

    func testFastPathAgreesWithTheGeneralParserOnRandomMutations() {
        var generator = SeededGenerator(seed: 0x5EED_F457)  // seeded: a failure replays
        let alphabet = Array(#"{}[]":,\ 0123456789-.eE+truefalsnul"#.utf8) + [0x80, 0xC3, 0xA9, 0xFF, 0x0A]
        for _ in 0..<20_000 {
            let seed = Self.seeds.randomElement(using: &generator)!
            assertAgreement(ByteMutations.mutate(seed, alphabet: alphabet, using: &generator))
        }
    }

    private func assertAgreement(_ bytes: [UInt8], limits: JSONLimits = .default, file: StaticString = #filePath, line: UInt = #line) {
        let fast = RPCDecoder.decode(line: bytes, limits: limits)
        let general = RPCDecoder.decodeInGeneral(line: bytes, limits: limits)
        XCTAssertEqual(fast, general, "input: \(bytes)", file: file, line: line)
        XCTAssertEqual(RPCDecoder.decode(line: bytes[...], limits: limits), general, "slice input: \(bytes)", file: file, line: line)
    }
}
