import Foundation
import LineProtocol
import Platform
import TestSupport
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
        (fd, port) = try LoopbackSocket.listen()
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
        guard let request = ReceivedHTTPRequest.read(from: connection) else { return nil }
        let body = (try? JSONParser.parse(request.body)) ?? .null
        return Received(
            deliveryID: request.header("X-Latchkey-Delivery") ?? "", requestID: body["request_id"]?.stringValue ?? "",
            text: body["text"]?.stringValue ?? "")
    }
}
