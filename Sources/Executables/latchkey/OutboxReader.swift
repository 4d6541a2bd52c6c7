import Foundation
import LineProtocol

/// Follows the outbox file and remembers the code each verification message carried, by
/// request id: how the bench plays a user reading an SMS. Shared by all bench threads.
final class OutboxReader: @unchecked Sendable {
    private let path: String
    private let lock = NSLock()
    private var offset: UInt64 = 0
    private var partial: [UInt8] = []
    private var codes: [String: String] = [:]
    private var links: [String: String] = [:]

    init(path: String) { self.path = path }

    /// The code sent for `requestID`, waiting for the message up to `timeoutSeconds`.
    func code(for requestID: String, timeoutSeconds: Double = 5) throws -> String {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while true {
            lock.lock()
            readNewLines()
            let code = codes[requestID]
            lock.unlock()
            if let code { return code }
            if Date() > deadline { throw OutboxError(message: "no message for \(requestID) in the outbox") }
            usleep(200)
        }
    }

    private func readNewLines() {
        guard let handle = FileHandle(forReadingAtPath: path) else { return }
        defer { try? handle.close() }
        handle.seek(toFileOffset: offset)
        let data = handle.readDataToEndOfFile()
        offset += UInt64(data.count)
        partial += data
        while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
            let line = Array(partial[..<newline])
            partial.removeSubrange(...newline)
            guard let message = try? JSONParser.parse(line), let text = message["text"]?.stringValue else { continue }
            if let requestID = message["request_id"]?.stringValue, let code = Self.firstCode(in: text) {
                codes[requestID] = code
            }
        }
    }

    /// The first run of 4 to 10 digits: the code (amounts like "50.00" come after it).
    static func firstCode(in text: String) -> String? {
        var run = ""
        for character in text {
            if character.isASCII && character.isNumber {
                run.append(character)
            } else {
                if (4...10).contains(run.count) { return run }
                run = ""
            }
        }
        return (4...10).contains(run.count) ? run : nil
    }
}

struct OutboxError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
