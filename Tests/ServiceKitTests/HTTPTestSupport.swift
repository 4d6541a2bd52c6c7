import Foundation
@testable import Gateway
@testable import HTTP
import LineProtocol
@testable import Platform
@testable import RPC
@testable import Runtime

/// Stands in for the gateway's dispatcher: a few methods, and a record of what it was called with.
final class FakeGatewayDispatcher: RPCDispatcher, @unchecked Sendable {
    private let lock = NSLock()
    private var calls: [(RPCRequest, CallContext)] = []
    let metrics = Metrics()

    var recorded: [(request: RPCRequest, context: CallContext)] {
        lock.lock()
        defer { lock.unlock() }
        return calls.map { ($0.0, $0.1) }
    }

    func dispatch(_ request: RPCRequest, context: CallContext, reply: @escaping @Sendable (Result<JSON, RPCError>) -> Void) {
        lock.lock()
        calls.append((request, context))
        lock.unlock()
        let params = request.params?.objectValue ?? [:]
        let metrics = self.metrics
        let finish: @Sendable (Result<JSON, RPCError>) -> Void = { outcome in
            let reason: String? = if case .failure(let error) = outcome { error.reason } else { nil }
            metrics.record(method: request.method, microseconds: 120, errorReason: reason)
            reply(outcome)
        }
        switch request.method {
        case "gateway.ping":
            finish(.success(["pong": true]))
        case "gateway.health":
            finish(.success(["status": "ok", "services": ["identity": ["up": 1, "total": 1]]]))
        case "gateway.metrics":
            finish(.success(metrics.snapshot()))
        case "t.echo":
            finish(.success(request.params ?? .null))
        case "t.slow":
            let milliseconds = Int(params["ms"]?.intValue ?? 100)
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
                finish(.success(["slept_ms": .int(Int64(milliseconds))]))
            }
        case "t.fail":
            let reason = Reason(rawValue: params["reason"]?.stringValue ?? "") ?? .internal
            let extra: [String: JSON] = reason == .rateLimited || reason == .locked ? ["retry_after": 7] : [:]
            finish(.failure(RPCError(reason, "failed on purpose", extra: extra)))
        case "identity.whoami":
            guard let session = params["session"]?.stringValue else {
                return finish(.failure(RPCError(.unauthenticated, "a valid session is required")))
            }
            finish(.success(["session": .string(session)]))
        case "reset.request":
            guard let email = params["email"]?.stringValue, email.contains("@") else {
                return finish(.failure(.invalidParams("email must be an e-mail address", field: "email")))
            }
            finish(.success(["ok": true]))
        case "reset.validate":
            if params["token"] == "lkr_good" { return finish(.success(["valid": true, "expires_at": 1])) }
            if params["token"] == "lkr_expired" { return finish(.failure(RPCError(.expired, "this reset link expired"))) }
            finish(.failure(RPCError(.invalidToken, "this reset link is not valid")))
        case "reset.complete":
            if params["token"] != "lkr_good" { return finish(.failure(RPCError(.invalidToken, "this reset link is not valid"))) }
            if params["password"] == "weak" { return finish(.failure(RPCError(.weakPassword, "too weak"))) }
            finish(.success(["ok": true]))
        default:
            finish(.failure(.methodNotFound(request.method)))
        }
    }
}

/// An `HTTPServer` with the gateway door over a fake dispatcher, on 127.0.0.1:0, on its own loop thread.
final class TestHTTPServer: @unchecked Sendable {
    let loop: EventLoop
    let server: HTTPServer
    let dispatcher: FakeGatewayDispatcher
    let endpoint: Endpoint
    private let finished = DispatchSemaphore(value: 0)

    init(limits: HTTPLimits = HTTPLimits(), settings: HTTPGatewayDoor.Settings = HTTPGatewayDoor.Settings(), handler: HTTPHandler? = nil) throws {
        loop = try EventLoop()
        dispatcher = FakeGatewayDispatcher()
        let door = handler ?? HTTPGatewayDoor(dispatcher: dispatcher, settings: settings)
        server = HTTPServer(loop: loop, limits: limits, handler: door, logger: Logger(service: "test", sink: LogSink()), replicaID: "test")
        let address = try server.listen(on: Endpoint(host: "127.0.0.1", port: 0))
        endpoint = Endpoint(host: "127.0.0.1", port: address.port)
        let loop = self.loop
        let finished = self.finished
        Thread {
            loop.run()
            finished.signal()
        }.start()
    }

    /// Reads loop-confined state from the test thread.
    func onLoop<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let box = ResultBox<T>()
        loop.execute { box.set(body()) }
        return box.wait()
    }

    var connectionCount: Int { onLoop { [server] in server.connectionCount } }

    /// Drains like SIGTERM would and waits for the loop to end.
    func stop() {
        let server = self.server
        let loop = self.loop
        loop.execute { server.drain { loop.stop() } }
        finished.wait()
    }
}

final class ResultBox<T>: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private var value: T?
    func set(_ value: T) {
        self.value = value
        semaphore.signal()
    }
    func wait() -> T {
        semaphore.wait()
        return value!
    }
}

/// A parsed response as a client sees it.
struct RawResponse {
    let status: Int
    let headers: HTTPHeaders
    let body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
    var json: JSON? { try? JSONParser.parse(body) }
}

/// A blocking HTTP/1.1 client over a raw socket, so tests can send exactly the bytes they mean.
final class RawHTTPClient: @unchecked Sendable {
    private let fd: Int32
    private var buffer: [UInt8] = []

    init(_ endpoint: Endpoint, timeoutMilliseconds: Int = 5000) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var timeout = timeval(tv_sec: timeoutMilliseconds / 1000, tv_usec: (timeoutMilliseconds % 1000) * 1000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var noDelay: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(endpoint.port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if status != 0 {
            close(fd)
            throw SystemError(call: "connect", errno: errno)
        }
    }

    deinit { close(fd) }

    /// Shrinks the receive buffer so a client that never reads fills the server's queue sooner.
    func setReceiveBuffer(_ bytes: Int32) {
        var value = bytes
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                throw SystemError(call: "send", errno: errno)
            }
            offset += written
        }
    }

    /// A request with the usual headers and a JSON body.
    static func post(_ path: String, _ body: String, headers: [String] = []) -> String {
        var text = "POST \(path) HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
        for header in headers { text += header + "\r\n" }
        return text + "\r\n" + body
    }

    static func get(_ path: String, headers: [String] = []) -> String {
        var text = "GET \(path) HTTP/1.1\r\nHost: test\r\n"
        for header in headers { text += header + "\r\n" }
        return text + "\r\n"
    }

    /// Sends one request and reads its response.
    func exchange(_ request: String) throws -> RawResponse {
        try send(request)
        guard let response = try readResponse() else { throw SystemError(call: "read", errno: ECONNRESET) }
        return response
    }

    /// The next response, or nil when the server closed the connection first.
    func readResponse(headRequest: Bool = false) throws -> RawResponse? {
        var headEnd: Int?
        var scanned = 0
        while headEnd == nil {
            headEnd = Self.find([13, 10, 13, 10], in: buffer, from: scanned)
            scanned = max(0, buffer.count - 3)
            if headEnd == nil { guard try fill() else { return nil } }
        }
        let head = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        var headers = HTTPHeaders()
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.add(String(line[..<colon]), line[line.index(after: colon)...].trimmingHTTPWhitespace())
        }
        let length = headRequest ? 0 : Int(headers["Content-Length"] ?? "0") ?? 0
        let bodyStart = headEnd! + 4
        while buffer.count < bodyStart + length { guard try fill() else { return nil } }
        let body = Array(buffer[bodyStart..<(bodyStart + length)])
        buffer.removeFirst(bodyStart + length)
        return RawResponse(status: Int(statusLine[1]) ?? 0, headers: headers, body: body)
    }

    /// True once the server has closed the connection (reads end of input), within the timeout.
    func isClosedByServer() -> Bool {
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

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        for index in start...(haystack.count - needle.count) where haystack[index] == needle[0] {
            if Array(haystack[index..<(index + needle.count)]) == needle { return index }
        }
        return nil
    }
}
