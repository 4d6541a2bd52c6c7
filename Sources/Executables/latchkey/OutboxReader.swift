import Foundation
import LineProtocol

/// Follows the outbox file and remembers the code each verification message carried, by
/// request id: how the bench plays a user reading an SMS. Shared by all bench threads. Each
/// poll reads only what was appended since the last one (one open handle, one pass over the
/// new bytes), and a code is forgotten once taken, so the cost per code stays flat however
/// long the run.
final class OutboxReader: @unchecked Sendable {
    private let path: String
    private let lock = NSLock()
    private var handle: FileHandle?
    private var partial: [UInt8] = []
    private var codes: [String: String] = [:]

    init(path: String) { self.path = path }

    deinit { try? handle?.close() }

    /// The code sent for `requestID`, waiting for the message up to `timeoutSeconds`.
    func code(for requestID: String, timeoutSeconds: Double = 5) throws -> String {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while true {
            lock.lock()
            if codes[requestID] == nil { readNewLines() }
            let code = codes.removeValue(forKey: requestID)
            lock.unlock()
            if let code { return code }
            if Date() > deadline { throw OutboxError(message: "no message for \(requestID) in the outbox") }
            usleep(200)
        }
    }

    private func readNewLines() {
        if handle == nil { handle = FileHandle(forReadingAtPath: path) }
        guard let handle else { return }
        partial += handle.availableData
        var start = 0
        while let newline = partial[start...].firstIndex(of: UInt8(ascii: "\n")) {
            let line = partial[start..<newline]
            start = newline + 1
            guard let message = try? JSONParser.parse(Array(line)), let text = message["text"]?.stringValue,
                let requestID = message["request_id"]?.stringValue, let code = Self.firstCode(in: text)
            else { continue }
            codes[requestID] = code
        }
        partial.removeFirst(start)
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
