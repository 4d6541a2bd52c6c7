import Foundation
import LineProtocol
import TestSupport
import XCTest

/// Random and hostile bytes against a live gateway: it never crashes, every line it sends
/// back is a valid JSON-RPC answer (or it closes the connection cleanly), and it keeps
/// serving everyone else.
final class HostileInputEndToEndTests: StackTestCase {
    private func isValidAnswer(_ json: JSON) -> Bool {
        func single(_ value: JSON) -> Bool {
            guard value["jsonrpc"] == "2.0", value["id"] != nil else { return false }
            switch (value["result"], value["error"]) {
            case (.some, nil): return true
            case (nil, .some(let error)): return error["code"]?.intValue != nil && error["message"]?.stringValue != nil
            default: return false
            }
        }
        if let items = json.arrayValue { return !items.isEmpty && items.allSatisfy(single) }
        return single(json)
    }

    func testRandomByteStreamsSplitAtRandomPointsNeverBreakTheGateway() throws {
        let fragments: [[UInt8]] = [
            Array(#"{"jsonrpc":"2.0","id":1,"method":"gateway.ping"}"#.utf8), Array("\n".utf8), Array("\r\n".utf8),
            Array("[".utf8), Array("]".utf8), Array("{".utf8), Array("\"".utf8), Array("\\u0000".utf8), [0], [0xff], [0xc0, 0x80],
            Array(#"{"jsonrpc":"2.0","method":"identity.ping"}"#.utf8), Array("1e999999".utf8), Array(#"{"a":1,"a":2}"#.utf8),
        ]
        for seed in UInt64(1)...UInt64(24) {
            var random = SeededGenerator(seed: seed)
            let client = try gateway()
            var stream: [UInt8] = []
            for _ in 0..<Int.random(in: 5...60, using: &random) {
                if Bool.random(using: &random) {
                    stream += fragments.randomElement(using: &random)!
                } else {
                    stream += (0..<Int.random(in: 1...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                }
            }
            // Send in random chunks, then a marker request we can wait for.
            var offset = 0
            while offset < stream.count {
                let length = min(stream.count - offset, Int.random(in: 1...64, using: &random))
                try client.sendRaw(Array(stream[offset..<offset + length]))
                offset += length
            }
            try client.sendRaw(Array("\n".utf8))
            try client.send(Array(#"{"jsonrpc":"2.0","id":"marker","method":"gateway.ping"}"#.utf8))
            // Read until the marker's answer or a clean close; every line on the way must be an answer.
            while let line = try client.readLine() {
                let json = try JSONParser.parse(line, limits: JSONLimits(maxDepth: 64, maxBytes: 1 << 20, maxStringBytes: 1 << 20))
                XCTAssertTrue(isValidAnswer(json), "seed \(seed): not a JSON-RPC answer: \(json.text.prefix(200))")
                if json["id"] == "marker" { break }
            }
            XCTAssertEqual(try gateway().result("gateway.ping"), ["pong": true], "seed \(seed): others are still served")
        }
    }

    func testTenMegabyteLineIsRefusedWithoutHurtingTheConnection() throws {
        let client = try gateway()
        var line = Array(#"{"jsonrpc":"2.0","id":1,"method":"gateway.ping","params":{"x":""#.utf8)
        line += [UInt8](repeating: UInt8(ascii: "a"), count: 10 << 20)
        line += Array(#""}}"#.utf8)
        try client.send(line)
        let answer = try JSONParser.parse(try XCTUnwrap(client.readLine()))
        XCTAssertEqual(answer["error"]?["data"]?["reason"], "line_too_long")
        XCTAssertEqual(try client.result("gateway.ping"), ["pong": true])
    }

    func testNulBytesHugeNumbersAndDuplicateKeysAreParseErrors() throws {
        let client = try gateway()
        let lines: [[UInt8]] = [
            Array(#"{"jsonrpc":"2.0","id":1,"method":"gateway.ping\#u{0}"}"#.utf8),
            Array(#"{"jsonrpc":"2.0","id":1e400,"method":"gateway.ping"}"#.utf8),
            Array(#"{"jsonrpc":"2.0","id":1,"method":"gateway.ping","method":"identity.ping"}"#.utf8),
        ]
        for line in lines {
            try client.send(line)
            let answer = try JSONParser.parse(try XCTUnwrap(client.readLine()))
            XCTAssertEqual(answer["error"]?["code"], -32700)
        }
    }
}
