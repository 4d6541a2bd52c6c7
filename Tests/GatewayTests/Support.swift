import Foundation
@testable import Gateway
import LineProtocol
import Platform
import RPC
import Runtime
import XCTest


/// A blocking line client over a plain socket, with a receive timeout. Test-only.
final class TestLineClient {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var nextID: Int64 = 0

    init(port: Int, receiveBufferBytes: Int32? = nil, timeoutMilliseconds: Int = 5000) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket failed: errno \(errno)") }
        if var size = receiveBufferBytes {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var timeout = timeval(tv_sec: timeoutMilliseconds / 1000, tv_usec: Int((timeoutMilliseconds % 1000) * 1000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else {
            Glibc.close(fd)
            throw TestFailure("connect failed: errno \(errno)")
        }
    }

    deinit { Glibc.close(fd) }

    func send(raw text: String) -> Bool {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    /// The next line, or nil on close / timeout.
    func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return nil }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    /// True when the server closed the connection (read gives 0 or reset) within the receive timeout.
    func waitForClose() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return true }
            if count < 0 { return errno == ECONNRESET }
        }
    }

    /// Sends one request and waits for its answer.
    func call(_ method: String, _ params: JSON? = nil, meta: [String: JSON]? = nil) throws -> RPCResponse {
        nextID += 1
        var line = RPCRequest(method: method, params: params, id: .int(nextID), meta: meta).encoded()
        line.append(UInt8(ascii: "\n"))
        guard send(raw: String(decoding: line, as: UTF8.self)) else { throw TestFailure("send failed") }
        guard let answer = readLine() else { throw TestFailure("no answer to \(method)") }
        let json = try JSONParser.parse(Array(answer.utf8), limits: .default)
        guard let response = RPCResponse.decode(json) else { throw TestFailure("not a response: \(answer)") }
        return response
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension RPCResponse {
    var result: JSON? { if case .success(let value) = outcome { value } else { nil } }
    var error: RPCError? { if case .failure(let value) = outcome { value } else { nil } }
    var reason: String? { error?.reason }
}

/// A loop on its own thread, stopped in `shutdown`.
final class LoopThread: @unchecked Sendable {
    let loop: EventLoop
    private let done = DispatchSemaphore(value: 0)

    init() throws {
        loop = try EventLoop()
        let thread = Thread { [loop, done] in
            loop.run()
            done.signal()
        }
        thread.start()
        // Wait until the loop runs (and knows its thread) before anyone asks `isInLoopThread`.
        _ = try sync { true }
        KeptAlive.shared.keep(self)
    }

    /// Stops the loop. The loop and what is registered on it stay referenced until the process
    /// exits (loops keep their handlers and timers forever, by design), so they are not leaks.
    func shutdown() {
        loop.stop()
        done.wait()
    }

    /// Runs `body` on the loop thread and waits for it.
    func sync<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        let box = ResultBox<T>()
        loop.execute { box.set(Result { try body() }) }
        return try box.wait().get()
    }
}

final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private var value: Result<T, Error>?
    func set(_ result: Result<T, Error>) {
        value = result
        semaphore.signal()
    }
    func wait() -> Result<T, Error> {
        semaphore.wait()
        return value!
    }
}

/// Counts what a fake service was asked, per method. Thread-safe.
final class CallLog: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    private var lastSeen: CallContext?

    var lastContext: CallContext? {
        lock.lock()
        defer { lock.unlock() }
        return lastSeen
    }

    func reset() {
        lock.lock()
        counts = [:]
        lastSeen = nil
        lock.unlock()
    }

    func record(_ method: String, _ context: CallContext) {
        lock.lock()
        counts[method, default: 0] += 1
        lastSeen = context
        lock.unlock()
    }

    func count(_ method: String) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return counts[method] ?? 0
    }

    var total: Int {
        lock.lock()
        defer { lock.unlock() }
        return counts.values.reduce(0, +)
    }
}

/// An in-process stand-in for one replica of a service: answers every method of that
/// service (public and internal) with who served it and the meta it believed.
final class FakeService: @unchecked Sendable {
    let service: String
    let replicaID: String
    let log = CallLog()
    let server: RPCServer
    let port: Int
    private let loopThread: LoopThread
    /// What identity.introspect answers for one token.
    struct FakeSession {
        var sessionID: String
        var aal: Int64
        var requiredFactors: [String]
        var stepUpUntil: Int64?
    }

    /// identity.introspect answers by token; tokens absent are unauthenticated.
    private let sessionsLock = NSLock()
    private var sessions: [String: FakeSession] = [:]
    var handlerDelayMilliseconds: UInt32 = 0
    /// When set, every public method answers this error (as a service whose own dependency failed would).
    var answerError: RPCError? {
        get { sessionsLock.withLock { forcedError } }
        set { sessionsLock.withLock { forcedError = newValue } }
    }
    private var forcedError: RPCError?

    init(service: String, replicaID: String, loopThread: LoopThread, extraMethods: [String] = [], port requestedPort: Int = 0) throws {
        self.service = service
        self.replicaID = replicaID
        self.loopThread = loopThread
        let router = Router(workers: WorkerPool(threadCount: 4, maxQueued: 1000), metrics: Metrics())
        var names = Set(PolicyTable.methods.keys.filter { $0.hasPrefix(service + ".") })
        names.formUnion(extraMethods.filter { $0.hasPrefix(service + ".") })
        names.insert("\(service).ping")
        names.insert("\(service).health")
        let box = WeakBox()
        for name in names where name != "\(service).health" && name != "identity.introspect" && name != "identity.logout" {
            router.register(name, execution: .pool) { params, context in
                guard let fake = box.value else { throw RPCError.internalError() }
                fake.log.record(name, context)
                if fake.handlerDelayMilliseconds > 0 { usleep(fake.handlerDelayMilliseconds * 1000) }
                if let error = fake.answerError { throw error }
                return [
                    "served": .string(name), "replica": .string(fake.replicaID),
                    "client": context.client.map(JSON.string) ?? .null, "request_id": .string(context.requestID),
                ]
            }
        }
        router.register("\(service).health", execution: .inline) { _, context in
            box.value?.log.record("\(service).health", context)
            return ["status": "ok", "replica_id": .string(replicaID)]
        }
        if service == "identity" {
            router.register("identity.introspect", execution: .inline) { params, context in
                guard let fake = box.value else { throw RPCError.internalError() }
                fake.log.record("identity.introspect", context)
                guard let token = params["session"]?.stringValue, let session = fake.session(token) else {
                    throw RPCError(.unauthenticated, "no such session")
                }
                return [
                    "user_id": "u1", "session_id": .string(session.sessionID), "device_id": "d1", "aal": .int(session.aal),
                    "aal2_at": session.stepUpUntil.map { .int($0 - 600) } ?? .null, "expires_at": .int(WallClock.nowSeconds() + 3600),
                    "required_factors": .array(session.requiredFactors.map(JSON.string)),
                    "step_up_until": session.stepUpUntil.map(JSON.int) ?? .null,
                ]
            }
            router.register("identity.logout", execution: .inline) { params, context in
                guard let fake = box.value else { throw RPCError.internalError() }
                fake.log.record("identity.logout", context)
                if let token = params["session"]?.stringValue { fake.endSession(token) }
                return ["ok": true, "served": "identity.logout"]
            }
        }
        server = RPCServer(
            loop: loopThread.loop, limits: ServerLimits(), dispatcher: router, logger: Logger(service: service, sink: LogSink()),
            replicaID: replicaID, trustsCallerMeta: true)
        let server = self.server
        port = try loopThread.sync { try server.listen(on: Endpoint(host: "127.0.0.1", port: requestedPort)).port }
        box.value = self
    }

    /// A live session. An aal 2 one passed its factor `stepUpAgeSeconds` ago (window: 600 s);
    /// an aal 1 one owes `requiredFactors`.
    func addSession(token: String, sessionID: String, aal: Int64, requiredFactors: [String] = [], stepUpAgeSeconds: Int64 = 0) {
        let stepUpUntil = aal >= 2 ? WallClock.nowSeconds() - stepUpAgeSeconds + 600 : nil
        sessionsLock.lock()
        sessions[token] = FakeSession(sessionID: sessionID, aal: aal, requiredFactors: requiredFactors, stepUpUntil: stepUpUntil)
        sessionsLock.unlock()
    }

    func endSession(_ token: String) {
        sessionsLock.lock()
        sessions.removeValue(forKey: token)
        sessionsLock.unlock()
    }

    func endSessions(id: String) {
        sessionsLock.lock()
        sessions = sessions.filter { $0.value.sessionID != id }
        sessionsLock.unlock()
    }

    func session(_ token: String) -> FakeSession? {
        sessionsLock.lock()
        defer { sessionsLock.unlock() }
        return sessions[token]
    }

    var endpoint: Endpoint { Endpoint(host: "127.0.0.1", port: port) }

    private(set) var crashed = false

    func resetLog() { log.reset() }

    /// Stops listening and drops every connection at once (like a crash, as seen from outside).
    func crash() throws {
        crashed = true
        let server = self.server
        try loopThread.sync {
            server.drain {}
            server.forceClose()
        }
    }
}

final class WeakBox: @unchecked Sendable {
    weak var value: FakeService?
}

/// A gateway in-process on port 0 in front of fake services.
final class GatewayUnderTest {
    let loopThread: LoopThread
    let gateway: Gateway
    let server: RPCServer
    let port: Int
    let logSink = LogSink()
    let accessLines = CapturedBytes()
    let accessLog: AccessLog

    init(endpoints: [String: [Endpoint]], settings: GatewaySettings = .unlimitedForTests, limits: ServerLimits = ServerLimits(), configure: ((RPCServer) -> Void)? = nil) throws {
        loopThread = try LoopThread()
        let logger = Logger(service: "gateway", sink: logSink)
        let captured = accessLines
        accessLog = AccessLog(replicaID: "gateway", flushBytes: 1) { captured.append($0) }
        gateway = Gateway.make(loop: loopThread.loop, endpoints: endpoints, settings: settings, metrics: Metrics(), logger: logger, accessLog: accessLog)
        server = RPCServer(loop: loopThread.loop, limits: limits, dispatcher: gateway, logger: logger, replicaID: "gateway", trustsCallerMeta: false)
        configure?(server)
        let server = self.server
        port = try loopThread.sync { try server.listen(on: Endpoint(host: "127.0.0.1", port: 0)).port }
    }

    func client(timeoutMilliseconds: Int = 5000) throws -> TestLineClient { try TestLineClient(port: port, timeoutMilliseconds: timeoutMilliseconds) }

    func shutdown() {
        let server = self.server
        try? loopThread.sync {
            server.drain {}
            server.forceClose()
        }
        accessLog.flush()
        loopThread.shutdown()
    }

    /// Waits until every replica of `service` has answered a health probe.
    func waitUntilUp(_ service: String, replicas: Int, timeoutMilliseconds: Int64 = 5000) throws {
        let deadline = MonotonicClock.nowMilliseconds() + timeoutMilliseconds
        while MonotonicClock.nowMilliseconds() < deadline {
            let statuses = gateway.pools[service]?.statuses ?? []
            if statuses.filter({ $0.state == .up }).count >= replicas { return }
            usleep(20_000)
        }
        throw TestFailure("\(service) replicas never came up")
    }
}

extension GatewaySettings {
    static var unlimitedForTests: GatewaySettings {
        var settings = GatewaySettings()
        settings.rateLimits = RateLimits.defaults.mapValues { _ in RateLimit(ratePerSecond: 0, burst: 0) }
        settings.healthIntervalMilliseconds = 200
        settings.healthTimeoutMilliseconds = 200
        return settings
    }
}

/// Bytes an access log wrote, for tests.
final class CapturedBytes: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes: [UInt8] = []
    func append(_ more: [UInt8]) {
        lock.lock()
        bytes.append(contentsOf: more)
        lock.unlock()
    }
    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Objects that live until the test process exits.
final class KeptAlive: @unchecked Sendable {
    static let shared = KeptAlive()
    private let lock = NSLock()
    private var objects: [AnyObject] = []

    func keep(_ object: AnyObject) {
        lock.lock()
        objects.append(object)
        lock.unlock()
    }
}
