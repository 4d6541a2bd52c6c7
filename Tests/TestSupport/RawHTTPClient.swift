import Foundation
import LineProtocol
import Platform

/// Header fields as received, in order; looked up by name, case-insensitively.
public struct RawHeaders {
    public let fields: [(name: String, value: String)]

    /// The first value of `name`, or nil.
    public subscript(name: String) -> String? { fields.first { $0.name.lowercased() == name.lowercased() }?.value }
}

/// A response as a raw client reads it off the wire.
public struct RawHTTPResponse {
    public let status: Int
    public let headers: RawHeaders
    public let body: [UInt8]

    public var text: String { String(decoding: body, as: UTF8.self) }
    public var json: JSON? { try? JSONParser.parse(body) }
}

/// A blocking HTTP/1.1 client over a raw socket, so tests can send exactly the bytes they mean.
public final class RawHTTPClient: @unchecked Sendable {
    private let fd: Int32
    private var buffer: [UInt8] = []

    public init(port: Int, timeoutMilliseconds: Int = 5000) throws {
        fd = try LoopbackSocket.connect(port: port, timeoutMilliseconds: timeoutMilliseconds)
    }

    public convenience init(_ endpoint: Endpoint, timeoutMilliseconds: Int = 5000) throws {
        try self.init(port: endpoint.port, timeoutMilliseconds: timeoutMilliseconds)
    }

    deinit { close(fd) }

    /// Shrinks the receive buffer so a client that never reads fills the server's queue sooner.
    public func setReceiveBuffer(_ bytes: Int32) {
        var value = bytes
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    public func send(_ bytes: [UInt8]) throws {
        guard LoopbackSocket.sendAll(fd, bytes) else { throw SystemError(call: "send", errno: errno) }
    }

    /// A request with the usual headers and a JSON body.
    public static func post(_ path: String, _ body: String, headers: [String] = []) -> String {
        var text = "POST \(path) HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
        for header in headers { text += header + "\r\n" }
        return text + "\r\n" + body
    }

    public static func get(_ path: String, headers: [String] = []) -> String {
        var text = "GET \(path) HTTP/1.1\r\nHost: test\r\n"
        for header in headers { text += header + "\r\n" }
        return text + "\r\n"
    }

    /// Sends one request and reads its response.
    public func exchange(_ request: String) throws -> RawHTTPResponse {
        try send(request)
        guard let response = try readResponse() else { throw SystemError(call: "read", errno: ECONNRESET) }
        return response
    }

    /// The next response, or nil when the server closed the connection first.
    public func readResponse(headRequest: Bool = false) throws -> RawHTTPResponse? {
        var headEnd: Int?
        while headEnd == nil {
            headEnd = buffer.firstRange(of: [13, 10, 13, 10])?.lowerBound
            if headEnd == nil { guard try fill() else { return nil } }
        }
        let head = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        let length = headRequest ? 0 : Int(RawHeaders(fields: headers)["Content-Length"] ?? "0") ?? 0
        let bodyStart = headEnd! + 4
        while buffer.count < bodyStart + length { guard try fill() else { return nil } }
        let body = Array(buffer[bodyStart..<(bodyStart + length)])
        buffer.removeFirst(bodyStart + length)
        return RawHTTPResponse(status: Int(statusLine[1]) ?? 0, headers: RawHeaders(fields: headers), body: body)
    }

    /// True once the server has closed the connection (reads end of input), within the timeout.
    public func isClosedByServer() -> Bool {
        while true {
            guard let more = try? fill() else { return true }  // reset
            if !more { return true }
        }
    }

    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return false }
            if count < 0 {
                if errno == EINTR { continue }
                throw SystemError(call: "read", errno: errno)
            }
            buffer.append(contentsOf: chunk[0..<count])
            return true
        }
    }
}
