import TestSupport
import XCTest
@testable import LineProtocol

/// The fast path for answer lines (what the gateway reads back from a service) must decode
/// exactly as the general parser does: the same response, or nil for the same lines.
final class ResponseFastPathTests: XCTestCase {
    static let seeds: [String] = [
        #"{"jsonrpc":"2.0","id":1,"result":{"pong":true}}"#,
        #" { "id" : "x" , "jsonrpc" : "2.0" , "error" : {"code":-32601,"message":"m","data":{"reason":"method_not_found"}} } "#,
        #"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}"#,
        #"{"jsonrpc":"2.0","id":1}"#,
        #"{"jsonrpc":"2.0","id":1,"result":1,"id":2}"#,
        #"{"jsonrpc":"2.0","id":1,"result":1,"extra":0}"#,
        #"{"jsonrpc":"2.0","id":true,"result":1}"#,
        #"{"jsonrpc":"2.0","id":null,"error":{"code":"x","message":"m"}}"#,
        #"{"jsonrpc":"1.0","id":1,"result":1}"#,
        #"{"jsonrpc":"2.0","id":1,"result":"\udc00"}"#,
        #"[{"jsonrpc":"2.0","id":1,"result":1}]"#,
        #"{"jsonrpc":"2.0","id":1,"result":{"a":1,"a":2}}"#,
    ]

    func testFastPathAgreesWithTheGeneralParser() {
        var generator = SeededGenerator(seed: 0x5EED_F457)  // seeded: a failure replays
        let alphabet = Array(#"{}[]":,\ 0123456789-.eE+truefalsnul"#.utf8) + [0x80, 0xC3, 0xA9, 0xFF]
        for seed in Self.seeds { assertAgreement(Array(seed.utf8)) }
        assertAgreement(Array(#"{"jsonrpc":"2.0","id":1,"result":[[1]]}"#.utf8), limits: JSONLimits(maxDepth: 2))
        for _ in 0..<20_000 {
            let seed = Self.seeds.randomElement(using: &generator)!
            assertAgreement(ByteMutations.mutate(seed, alphabet: alphabet, using: &generator))
        }
    }

    private func assertAgreement(_ bytes: [UInt8], limits: JSONLimits = .default, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(
            RPCResponse.decode(line: bytes, limits: limits), RPCResponse.decodeInGeneral(line: bytes, limits: limits), "input: \(bytes)",
            file: file, line: line)
    }
}
