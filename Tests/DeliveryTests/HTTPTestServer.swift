import Foundation
import Platform
import TestSupport
import XCTest

/// A tiny HTTP/1.1 server for tests: one thread, one connection at a time, records exactly what
/// arrives (method, path, headers, body) and answers from a script (default `200 {}`).
final class HTTPTestServer: @unchecked Sendable {
    typealias Received = ReceivedHTTPRequest

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
        (fd, port) = try LoopbackSocket.listen(backlog: 16)
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
        guard let request = ReceivedHTTPRequest.read(from: connection) else { return }
        lock.lock()
        requests.append(request)
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
