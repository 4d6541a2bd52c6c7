import Foundation
import Platform

/// One HTTP/1.1 request as a test server read it: exactly the bytes the client sent, split.
public struct ReceivedHTTPRequest: Sendable {
    public let method: String
    public let path: String
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]

    /// The first value of `name` (case-insensitive).
    public func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name.lowercased() }?.value }
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// Reads one request off a blocking socket: the head, then `Content-Length` bytes of body;
    /// nil when the peer closes (or the read times out) first.
    public static func read(from fd: Int32) -> ReceivedHTTPRequest? {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 8192)
        var headEnd: Range<Int>?
        while headEnd == nil {
            let got = Glibc.read(fd, &chunk, chunk.count)
            if got <= 0 { return nil }
            buffer += chunk[0..<got]
            headEnd = buffer.firstRange(of: [13, 10, 13, 10])
        }
        let head = String(decoding: buffer[..<headEnd!.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = head[0].split(separator: " ")
        guard requestLine.count >= 2 else { return nil }
        var headers: [(name: String, value: String)] = []
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        let length = Int(headers.first { $0.name.lowercased() == "content-length" }?.value ?? "0") ?? 0
        var body = Array(buffer[headEnd!.upperBound...])
        while body.count < length {
            let got = Glibc.read(fd, &chunk, chunk.count)
            if got <= 0 { return nil }
            body += chunk[0..<got]
        }
        return ReceivedHTTPRequest(method: String(requestLine[0]), path: String(requestLine[1]), headers: headers, body: body)
    }
}
