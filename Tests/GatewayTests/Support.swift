import Foundation
@testable import Gateway
import HTTP
import LineProtocol
import Platform
import RPC
import Runtime
import ServerTestSupport
import TestSupport
import XCTest


/// Counts what a fake service was asked, per method. Thread-safe.
final class CallLog: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    private var lastSeen: CallContext?
    private var lastSeenByMethod: [String: CallContext] = [:]

    var lastContext: CallContext? {
        lock.lock()
        defer { lock.unlock() }
        return lastSeen
    }

    /// The context of the last call of `method`: the gateway's health probes may land after it.
    func lastContext(of method: String) -> CallContext? {
        lock.lock()
        defer { lock.unlock() }
        return lastSeenByMethod[method]
    }

    func reset() {
        lock.lock()
        counts = [:]
        lastSeen = nil
        lastSeenByMethod = [:]
        lock.unlock()
    }

    func record(_ method: String, _ context: CallContext) {
        lock.lock()
        counts[method, default: 0] += 1
        lastSeen = context
        lastSeenByMethod[method] = context
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
    /// When set, every public method waits in it until the test releases it (a replica busy with a request).
    var holding: Blocker? {
        get { sessionsLock.withLock { heldBy } }
        set { sessionsLock.withLock { heldBy = newValue } }
    }
    private var heldBy: Blocker?
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
                fake.holding?.hold()
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

    private var httpServers: [HTTPServer] = []

    /// An HTTP listener on 127.0.0.1:0 on the gateway's loop (the public door or the operator's),
    /// stopped with the gateway.
    func serveHTTP(_ handler: HTTPHandler) throws -> Endpoint {
        let server = HTTPServer(loop: loopThread.loop, handler: handler, logger: Logger(service: "gateway", sink: logSink), replicaID: "gateway")
        httpServers.append(server)
        return Endpoint(host: "127.0.0.1", port: try loopThread.sync { try server.listen(on: Endpoint(host: "127.0.0.1", port: 0)).port })
    }

    func shutdown() {
        let server = self.server
        let httpServers = self.httpServers
        try? loopThread.sync {
            server.drain {}
            server.forceClose()
            for http in httpServers {
                http.drain {}
                http.forceClose()
            }
        }
        accessLog.flush()
        loopThread.shutdown()
    }

    /// Waits until every replica of `service` has answered a health probe.
    func waitUntilUp(_ service: String, replicas: Int, timeoutMilliseconds: Int64 = 5000) throws {
        let up = eventually(timeoutSeconds: Double(timeoutMilliseconds) / 1000) {
            (gateway.pools[service]?.statuses ?? []).filter { $0.state == .up }.count >= replicas
        }
        if !up { throw TestFailure("\(service) replicas never came up") }
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
