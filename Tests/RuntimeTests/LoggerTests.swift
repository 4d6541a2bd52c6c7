import LineProtocol
import Runtime
import XCTest

/// A log line holds the logger's metadata, the request id, the call's fields and the level,
/// message and time, each later source winning over an earlier one on a shared key.
final class LoggerTests: XCTestCase {
    func testALineMergesMetadataRequestIDFieldsLevelMessageAndTimeInThatOrder() throws {
        let sink = LogSink()
        let logger = Logger(service: "verification", sink: sink)
            .with(["verification.channel": "sms", "rpc.request_id": "from metadata", "shared": "metadata"])
            .with(requestID: "req-1")
        logger.warning("delivery failed", ["shared": "field", "level": "from a field", "error": "quote \" and \n newline", "n": 7])

        let text = sink.capturedText
        XCTAssertTrue(text.hasSuffix("\n"))
        XCTAssertEqual(text.filter { $0 == "\n" }.count, 1, "one line")
        let line = Array(text.utf8.dropLast())
        guard case .object(let fields) = try JSONParser.parse(line), case .string(let timestamp)? = fields["ts"] else {
            return XCTFail("not an object with a time: \(text)")
        }
        let expected: [String: JSON] = [
            "service": "verification", "verification.channel": "sms", "rpc.request_id": "req-1", "shared": "field",
            "level": "warning", "msg": "delivery failed", "error": "quote \" and \n newline", "n": 7, "ts": .string(timestamp),
        ]
        XCTAssertEqual(String(decoding: line, as: UTF8.self), JSON.object(expected).text, "keys sorted, each once, as the dictionary encodes")
    }

    func testALineBelowTheLevelIsNotWrittenNorItsFieldsBuilt() {
        let sink = LogSink()
        let logger = Logger(service: "identity", minimumLevel: .warning, sink: sink)
        var built = false
        logger.info("quiet", { built = true; return ["k": "v"] }())
        XCTAssertFalse(built)
        XCTAssertEqual(sink.capturedText, "")
    }
}
