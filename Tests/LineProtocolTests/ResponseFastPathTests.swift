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
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array(#"{}[]":,\ 0123456789-.eE+truefalsnul"#.utf8) + [0x80, 0xC3, 0xA9, 0xFF]
        for seed in Self.seeds { assertAgreement(Array(seed.utf8)) }
        assertAgreement(Array(#"{"jsonrpc":"2.0","id":1,"result":[[1]]}"#.utf8), limits: JSONLimits(maxDepth: 2))
        for _ in 0..<20_000 {
            var bytes = Array(Self.seeds.randomElement(using: &generator)!.utf8)
            for _ in 0..<Int.random(in: 1...3, using: &generator) where !bytes.isEmpty {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[index] = alphabet.randomElement(using: &generator)!
                case 1: bytes.remove(at: index)
                default: bytes.insert(alphabet.randomElement(using: &generator)!, at: index)
                }
            }
            assertAgreement(bytes)
        }
    }

    private func assertAgreement(_ bytes: [UInt8], limits: JSONLimits = .default, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(
            RPCResponse.decode(line: bytes, limits: limits), RPCResponse.decodeInGeneral(line: bytes, limits: limits), "input: \(bytes)",
            file: file, line: line)
    }
}
