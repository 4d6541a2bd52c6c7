import Foundation
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
        try stream.write(bytes)
        var reader = HTTPResponseReader(stream: stream, maxBytes: maxResponseBytes)
        return try reader.read(expectBody: request.method != "HEAD")
    }

    private func connect(_ url: HTTPURL) throws(HTTPError) -> HTTPStream {
        let plain = try HTTPPlainStream.connect(host: url.host, port: url.port, timeoutMilliseconds: timeoutMilliseconds)
        guard url.isTLS else { return plain }
        return try HTTPTLSStream(context: tls, plain: plain, host: url.host)
    }
}

/// A connected byte stream: a socket, or TLS over one.
protocol HTTPStream: AnyObject {
    func write(_ bytes: [UInt8]) throws(HTTPError)
    /// Up to `count` bytes; empty at end of stream.
    func read(max count: Int) throws(HTTPError) -> [UInt8]
    func close()
}

final class HTTPPlainStream: HTTPStream {
    let fd: Int32
    private var closed = false

    init(fd: Int32) { self.fd = fd }
    deinit { close() }

    /// getaddrinfo, then a blocking connect to each address in turn (bounded by SO_SNDTIMEO).
    static func connect(host: String, port: Int, timeoutMilliseconds: Int) throws(HTTPError) -> HTTPPlainStream {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            throw HTTPError("cannot resolve \(host)")
        }
        defer { freeaddrinfo(list) }
        var lastErrno: Int32 = 0
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            cursor = entry.pointee.ai_next
            let fd: Int32
            do { fd = try Socket.openStream(family: entry.pointee.ai_family, nonBlocking: false) } catch {
                lastErrno = error.errno
                continue
            }
            var timeout = timeval(tv_sec: timeoutMilliseconds / 1000, tv_usec: (timeoutMilliseconds % 1000) * 1000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            if LibC.connect(fd, entry.pointee.ai_addr, entry.pointee.ai_addrlen) == 0 { return HTTPPlainStream(fd: fd) }
            lastErrno = errno
            LibC.close(fd)
        }
        throw HTTPError("cannot connect to \(host):\(port) (errno \(lastErrno))")
    }

    func write(_ bytes: [UInt8]) throws(HTTPError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { LibC.send(fd, $0.baseAddress! + offset, bytes.count - offset, Socket.sendFlags) }
            if written < 0 {
                if errno == EINTR { continue }
                throw HTTPError(errno == EAGAIN ? "write timed out" : "write failed (errno \(errno))")
            }
            offset += written
        }
    }

    func read(max count: Int) throws(HTTPError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        while true {
            let got = buffer.withUnsafeMutableBytes { LibC.read(fd, $0.baseAddress, count) }
            if got >= 0 { return Array(buffer[0..<got]) }
            if errno == EINTR { continue }
            throw HTTPError(errno == EAGAIN ? "read timed out" : "read failed (errno \(errno))")
        }
    }

    func close() {
        guard !closed else { return }
        closed = true
        LibC.close(fd)
    }
}

/// TLS over a connected socket, through the TLS layer: handshake and peer verification on
/// creation; timeouts are the socket's.
final class HTTPTLSStream: HTTPStream {
    private let session: TLSConnection
    private let plain: HTTPPlainStream

    init(context: TLSClientContext, plain: HTTPPlainStream, host: String) throws(HTTPError) {
        self.plain = plain
        do {
            session = try context.connection(overSocket: plain.fd, to: PeerName(host))
            try session.completeHandshake()
        } catch {
            throw HTTPError(error.description)
        }
    }

    deinit { close() }

    func write(_ bytes: [UInt8]) throws(HTTPError) {
        let written = bytes.withUnsafeBytes { raw in Result { () throws(TLSError) in try session.writeAll(raw) } }
        try written.mapError { HTTPError($0.description) }.get()
    }

    func read(max count: Int) throws(HTTPError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let got = buffer.withUnsafeMutableBytes { raw in Result { () throws(TLSError) in try session.readSome(into: raw) } }
        return Array(buffer[0..<(try got.mapError { HTTPError($0.description) }.get())])
    }

    func close() {
        session.shutdown()
        plain.close()
    }
}

/// Reads a status line, headers and a body (Content-Length, chunked, or to the end), bounded.
struct HTTPResponseReader {
    let stream: HTTPStream
    let maxBytes: Int
    private var buffer: [UInt8] = []
    private var ended = false

    init(stream: HTTPStream, maxBytes: Int) {
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
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
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
        let more = try stream.read(max: 16 * 1024)
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
            let sizeText = (line.split(separator: ";").first.map(String.init) ?? "").trimmingCharacters(in: .whitespaces)
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
