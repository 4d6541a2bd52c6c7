import FoundationEssentials
import Platform
import Secrets
import TLS

/// A small blocking HTTP/1.1 client for provider APIs: one request per connection
/// (`Connection: close`), plain or TLS (the TLS layer: TLS 1.2+, the peer verified against the
/// system store or `caFile` by host name or IP address), timeouts on connect and every read and
/// write, a bound on the response size. Worker threads only.
public final class HTTPClient: Sendable {
    public let timeoutMilliseconds: Int
    public let maxResponseBytes: Int
    private let tls: TLSClientContext

    public init(timeoutMilliseconds: Int = 10_000, maxResponseBytes: Int = 1 << 20, caFile: String? = nil) throws(HTTPError) {
        precondition(timeoutMilliseconds > 0 && maxResponseBytes > 0)
        self.timeoutMilliseconds = timeoutMilliseconds
        self.maxResponseBytes = maxResponseBytes
        do {
            tls = try TLSClientContext(trustedCertificatesFile: caFile)
        } catch {
            throw HTTPError("cannot load trusted certificates: \(error)")
        }
        ignoreBrokenPipeSignals()  // OpenSSL writes with write(2): a provider that hangs up must not kill the process.
    }

    public func send(_ request: HTTPClient.Request) throws(HTTPError) -> HTTPClient.Response {
        let stream = try connect(request.url)
        defer { stream.close() }
        var head = "\(request.method) \(request.url.path) HTTP/1.1\r\nHost: \(request.url.hostHeader)\r\n"
        head += "Content-Length: \(request.body.count)\r\nConnection: close\r\n"
        for (name, value) in request.headers {
            guard !name.contains(where: { $0 == "\r" || $0 == "\n" || $0 == ":" }), !value.contains(where: { $0 == "\r" || $0 == "\n" }) else {
                throw HTTPError("header \(name) holds a line break")
            }
            head += "\(name): \(value)\r\n"
        }
        head += "\r\n"
        // Headers and body carry provider credentials (an API secret, a Basic authorization).
        var bytes = Array(head.utf8) + request.body
        defer { secureWipe(&bytes) }
        do { try stream.write(bytes) } catch { throw HTTPError(error.description) }
        var reader = HTTPResponseReader(stream: stream, maxBytes: maxResponseBytes)
        return try reader.read(expectBody: request.method != "HEAD")
    }

    private func connect(_ url: HTTPURL) throws(HTTPError) -> BlockingStream {
        let socket: BlockingSocket
        do {
            socket = try BlockingSocket.connect(
                host: url.host, port: url.port, connectTimeoutMilliseconds: timeoutMilliseconds, ioTimeoutMilliseconds: timeoutMilliseconds)
        } catch {
            throw HTTPError(error.description)
        }
        guard url.isTLS else { return socket }
        do { return try BlockingTLSStream(context: tls, over: socket, host: url.host) } catch { throw HTTPError(error.description) }
    }
}

/// Reads a status line, headers and a body (Content-Length, chunked, or to the end), bounded.
struct HTTPResponseReader {
    let stream: BlockingStream
    let maxBytes: Int
    private var buffer: [UInt8] = []
    private var ended = false

    init(stream: BlockingStream, maxBytes: Int) {
        self.stream = stream
        self.maxBytes = maxBytes
    }

    mutating func read(expectBody: Bool) throws(HTTPError) -> HTTPClient.Response {
        let head = try readHead()
        let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]), (100...599).contains(status) else {
            throw HTTPError("not an HTTP/1.x status line")
        }
        var headers: [(String, String)] = []
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw HTTPError("malformed header line") }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingWhitespace()))
        }
        let response = HTTPClient.Response(status: status, headers: headers, body: [])
        guard expectBody, status >= 200, status != 204, status != 304 else { return response }
        var body: [UInt8]
        if response.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
            body = try readChunked()
        } else if let lengthText = response.header("Content-Length") {
            guard let length = Int(lengthText), length >= 0, length <= maxBytes else { throw HTTPError("bad or too large Content-Length") }
            body = try readExactly(length)
        } else {
            while try fill() {}
            body = buffer
            buffer.removeAll()
        }
        return HTTPClient.Response(status: status, headers: headers, body: body)
    }

    /// Reads more into the buffer; false at the end of the stream.
    private mutating func fill() throws(HTTPError) -> Bool {
        guard !ended else { return false }
        let more: [UInt8]
        do { more = try stream.read(max: 16 * 1024) } catch { throw HTTPError(error.description) }
        if more.isEmpty {
            ended = true
            return false
        }
        buffer += more
        guard buffer.count <= maxBytes + 16 * 1024 else { throw HTTPError("response larger than \(maxBytes) bytes") }
        return true
    }

    private mutating func readHead() throws(HTTPError) -> [UInt8] {
        let separator: [UInt8] = [13, 10, 13, 10]
        while true {
            if let range = buffer.firstRange(of: separator) {
                let head = Array(buffer[..<range.lowerBound])
                buffer.removeSubrange(..<range.upperBound)
                return head
            }
            guard buffer.count <= 64 * 1024 else { throw HTTPError("response headers too large") }
            guard try fill() else { throw HTTPError("connection closed before the response headers") }
        }
    }

    private mutating func readExactly(_ count: Int) throws(HTTPError) -> [UInt8] {
        while buffer.count < count {
            guard try fill() else { throw HTTPError("connection closed inside the response body") }
        }
        let out = Array(buffer[..<count])
        buffer.removeSubrange(..<count)
        return out
    }

    private mutating func readLine() throws(HTTPError) -> String {
        while true {
            if let range = buffer.firstRange(of: [13, 10]) {
                let line = String(decoding: buffer[..<range.lowerBound], as: UTF8.self)
                buffer.removeSubrange(..<range.upperBound)
                return line
            }
            guard buffer.count <= 4096 else { throw HTTPError("chunk header too long") }
            guard try fill() else { throw HTTPError("connection closed inside a chunked body") }
        }
    }

    private mutating func readChunked() throws(HTTPError) -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let line = try readLine()
            let sizeText = (line.split(separator: ";").first.map(String.init) ?? "").trimmingWhitespace()
            guard let size = Int(sizeText, radix: 16), size >= 0, body.count + size <= maxBytes else { throw HTTPError("bad chunk size") }
            if size == 0 {
                while try !readLine().isEmpty {}
                return body
            }
            body += try readExactly(size)
            guard try readLine().isEmpty else { throw HTTPError("chunk not followed by CRLF") }
        }
    }
}
