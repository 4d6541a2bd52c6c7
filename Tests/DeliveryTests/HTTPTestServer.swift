import Foundation
import Platform
import XCTest

/// A tiny HTTP/1.1 server for tests: one thread, one connection at a time, records exactly what
/// arrives (method, path, headers, body) and answers from a script (default `200 {}`).
final class HTTPTestServer: @unchecked Sendable {
    struct Received {
        let method: String
        let path: String
        let headers: [(String, String)]
        let body: [UInt8]

        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
        var bodyText: String { String(decoding: body, as: UTF8.self) }
    }

    struct Reply {
        var status: Int
        var body: String
        var headers: [(String, String)] = [("Content-Type", "application/json")]
        /// Send the body with `Transfer-Encoding: chunked` in pieces of this size.
        var chunkSize: Int?

        init(status: Int, body: String, headers: [(String, String)] = [("Content-Type", "application/json")], chunkSize: Int? = nil) {
            self.status = status
            self.body = body
            self.headers = headers
            self.chunkSize = chunkSize
        }
    }

    let port: Int
    private let fd: Int32
    private let lock = NSLock()
    private var replies: [Reply] = []
    private var requests: [Received] = []
    private var stopped = false
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, 16) == 0 else { throw NSError(domain: "HTTPTestServer", code: Int(errno)) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
        let box = ThreadBox()
        box.server = self
        let thread = Thread { box.server?.serve() }
        self.thread = thread
        thread.start()
    }

    private final class ThreadBox: @unchecked Sendable { weak var server: HTTPTestServer? }

    var url: String { "http://127.0.0.1:\(port)" }

    func script(_ replies: [Reply]) {
        lock.lock()
        self.replies = replies
        lock.unlock()
    }

    var received: [Received] {
        lock.lock()
        defer { lock.unlock() }
        return requests
    }

    func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        _ = finished.wait(timeout: .now() + 5)
    }

    private func serve() {
        defer { finished.signal() }
        while true {
            let connection = accept(fd, nil, nil)
            if connection < 0 {
                lock.lock()
                let done = stopped
                lock.unlock()
                if done || errno == EBADF || errno == EINVAL { return }
                continue
            }
            handle(connection)
            close(connection)
        }
    }

    private func handle(_ connection: Int32) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 8192)
        var headEnd: Range<Int>?
        while headEnd == nil {
            let got = read(connection, &chunk, chunk.count)
            if got <= 0 { return }
            buffer += chunk[0..<got]
            headEnd = buffer.firstRange(of: [13, 10, 13, 10])
        }
        let head = String(decoding: buffer[..<headEnd!.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = head[0].split(separator: " ")
        var headers: [(String, String)] = []
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        let length = Int(headers.first { $0.0.lowercased() == "content-length" }?.1 ?? "0") ?? 0
        var body = Array(buffer[headEnd!.upperBound...])
        while body.count < length {
            let got = read(connection, &chunk, chunk.count)
            if got <= 0 { break }
            body += chunk[0..<got]
        }
        lock.lock()
        requests.append(Received(method: String(requestLine[0]), path: String(requestLine[1]), headers: headers, body: body))
        let reply = replies.isEmpty ? Reply(status: 200, body: "{}") : replies.removeFirst()
        lock.unlock()
        var response = "HTTP/1.1 \(reply.status) Status\r\nConnection: close\r\n"
        for (name, value) in reply.headers { response += "\(name): \(value)\r\n" }
        let bodyBytes = Array(reply.body.utf8)
        var payload: [UInt8]
        if let size = reply.chunkSize {
            response += "Transfer-Encoding: chunked\r\n\r\n"
            payload = Array(response.utf8)
            var offset = 0
            while offset < bodyBytes.count {
                let piece = bodyBytes[offset..<min(bodyBytes.count, offset + size)]
                payload += Array((String(piece.count, radix: 16) + ";ext=1\r\n").utf8) + piece + [13, 10]
                offset += size
            }
            payload += Array("0\r\n\r\n".utf8)
        } else {
            response += "Content-Length: \(bodyBytes.count)\r\n\r\n"
            payload = Array(response.utf8) + bodyBytes
        }
        _ = payload.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
