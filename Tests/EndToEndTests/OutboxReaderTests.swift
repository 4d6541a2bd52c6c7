import Foundation
import StackLauncher
import XCTest

/// The bench's outbox reader finds a code written after it started, however much the file held
/// before: `latchkey bench long` runs the verify row and then the transfer row on one stack, and
/// the transfer row's reader starts on the thousands of messages the verify row left.
final class OutboxReaderTests: XCTestCase {
    func testACodeWrittenAfterALongBacklogIsFound() throws {
        let directory = NSTemporaryDirectory() + "outbox-reader-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/outbox.jsonl"
        // 20,000 earlier messages, about 2 MB, as a verify row leaves them.
        var backlog = ""
        for index in 0..<20_000 {
            backlog += #"{"at":1,"channel":"sms","request_id":"vr_old\#(index)","text":"Your code is 123456","to":"+15555550100"}"# + "\n"
        }
        try backlog.write(toFile: path, atomically: false, encoding: .utf8)

        let reader = try OutboxReader(path: path)
        defer { reader.stop() }
        let file = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        file.seekToEndOfFile()
        file.write(Data((#"{"at":2,"channel":"sms","request_id":"vr_new","text":"Your code is 654321","to":"+15555550101"}"# + "\n").utf8))
        try file.close()
        XCTAssertEqual(try reader.code(for: "vr_new", timeoutSeconds: 10), "654321")
    }
}
