import Foundation
import LineProtocol
import Platform
import XCTest

/// A slow SMS provider: a real HTTP server on 127.0.0.1 that reads each webhook POST, records
/// it, and holds the answer until the test calls `release()` or `holdMilliseconds` pass (the
/// provider "answers after 30 s"). A connection its client drops while held is recorded as cut.
final class HoldingWebhookServer: @unchecked Sendable {
    struct Received: Sendable {
        /// `X-Latchkey-Delivery`: the idempotency key of the message.
        let deliveryID: String
        let requestID: String
        let text: String
    }

    let port: Int
    private let fd: Int32
    private let holdMilliseconds: Int
    private let condition = NSCondition()
    private var released = false
    private var stopped = false
    private var received: [Received] = []
    private var answered: [Received] = []
    private var cut = 0
    private var openConnections = 0

    init(holdMilliseconds: Int = 30_000) throws {
        self.holdMilliseconds = holdMilliseconds
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, 64) == 0 else { throw MissingMessage(description: "cannot listen") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in acceptLoop() }.start()
    }

    /// Answers every held request and every later one at once.
    func release() {
        condition.lock()
        released = true
        condition.broadcast()
        condition.unlock()
    }

    /// Stops accepting and waits (bounded) for the connection threads to end.
    func stop() {
        release()
        condition.lock()
        stopped = true
        condition.unlock()
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        _ = waitFor(seconds: 5) { openConnections == 0 }
    }

    /// POSTs read so far (answered or not), oldest first.
    var requests: [Received] { locked { received } }
    /// POSTs answered 200.
    var answers: [Received] { locked { answered } }

    /// Waits until `predicate` (evaluated under the lock) holds, or the deadline passes.
    private func waitFor(seconds: Double, _ predicate: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        while !predicate() {
            if !condition.wait(until: deadline) { return predicate() }
        }
        return true
    }

    func waitForRequests(_ count: Int, seconds: Double = 20) -> Bool { waitFor(seconds: seconds) { received.count >= count } }

    func waitForCut(_ count: Int, seconds: Double = 10) -> Bool { waitFor(seconds: seconds) { cut >= count } }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    private func acceptLoop() {
        while true {
            let connection = accept(fd, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                return
            }
            condition.lock()
            openConnections += 1
            condition.unlock()
            Thread { [self] in serve(connection) }.start()
        }
    }

    private func serve(_ connection: Int32) {
        defer {
            close(connection)
            condition.lock()
            openConnections -= 1
            condition.broadcast()
            condition.unlock()
        }
        guard let request = readRequest(connection) else { return }
        condition.lock()
        received.append(request)
        condition.broadcast()
        let deadline = Date().addingTimeInterval(Double(holdMilliseconds) / 1000)
        // Held: wake every 20 ms to notice a client that hung up (kill -9 of the sender).
        while !released && !stopped && Date() < deadline {
            _ = condition.wait(until: min(deadline, Date().addingTimeInterval(0.02)))
            if peerClosed(connection) {
                cut += 1
                condition.broadcast()
                condition.unlock()
                return
            }
        }
        condition.unlock()
        let response = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
        let sent = Array(response.utf8).withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        condition.lock()
        if sent == response.utf8.count { answered.append(request) }
        condition.broadcast()
        condition.unlock()
    }

    private func peerClosed(_ connection: Int32) -> Bool {
        var byte: UInt8 = 0
        let got = recv(connection, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    private func readRequest(_ connection: Int32) -> Received? {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 8192)
        while true {
            let got = read(connection, &chunk, chunk.count)
            if got <= 0 { return nil }
            data += chunk[0..<got]
            guard let end = data.firstRange(of: [13, 10, 13, 10]) else { continue }
            var headers: [String: String] = [:]
            for line in String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n").dropFirst() {
                if let colon = line.firstIndex(of: ":") {
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
            }
            let length = Int(headers["content-length"] ?? "0") ?? 0
            guard data.count - end.upperBound >= length else { continue }
            let body = (try? JSONParser.parse(Array(data[end.upperBound...]))) ?? .null
            return Received(
                deliveryID: headers["x-latchkey-delivery"] ?? "", requestID: body["request_id"]?.stringValue ?? "",
                text: body["text"]?.stringValue ?? "")
        }
    }
}
