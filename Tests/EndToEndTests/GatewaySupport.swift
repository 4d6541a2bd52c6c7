import Foundation
import LineProtocol
import Platform
import RPC
import Runtime
import StackLauncher
import TestSupport
import XCTest

/// One real executable started by a gateway test, on an ephemeral port, killed in `stop`.
final class LaunchedProcess {
    let name: String
    let process: Process
    let logPath: String
    let endpoint: Endpoint

    init(_ executable: String, name: String, arguments: [String], directory: String) throws {
        self.name = name
        logPath = (directory as NSString).appendingPathComponent("\(name).log")
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath(executable))
        process.arguments = ["--listen", "127.0.0.1:0", "--data-dir", (directory as NSString).appendingPathComponent(name)] + arguments
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        let marker = "\"net.listen\":\""
        var found: Endpoint?
        while found == nil && Date() < deadline {
            let log = readTextFile(logPath)
            if let range = log.range(of: marker), let end = log[range.upperBound...].firstIndex(of: "\"") {
                found = Endpoint(String(log[range.upperBound..<end]))
            } else if !process.isRunning {
                throw GatewayTestError("\(name) exited before listening: \(log)")
            } else {
                usleep(20_000)
            }
        }
        guard let found else { throw GatewayTestError("\(name) never listened") }
        endpoint = found
    }

    var log: String { readTextFile(logPath) }

    /// A gateway's operator listener, from its `metrics.listen` log line (bound before `listening`).
    var metricsEndpoint: Endpoint {
        get throws { try loggedMetricsEndpoint(in: log) }
    }

    func kill(signal: Int32 = SIGKILL) {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, signal)
        process.waitUntilExit()
    }

    func stop() { kill(signal: SIGTERM) }
}

/// A whole file as text, through plain read(2): FoundationEssentials' `String(contentsOfFile:)`
/// leaks its buffer when the file is empty (LeakSanitizer reports it), and logs start empty.
func readTextFile(_ path: String) -> String {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return "" }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count <= 0 { break }
        bytes.append(contentsOf: chunk[0..<count])
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// The gateway's operator listener named by its `metrics.listen` log line.
func loggedMetricsEndpoint(in log: String) throws -> Endpoint {
    guard let range = log.range(of: "\"metrics.listen\":\""), let end = log[range.upperBound...].firstIndex(of: "\""),
        let endpoint = Endpoint(String(log[range.upperBound..<end]))
    else { throw GatewayTestError("the gateway has no metrics listener (start it with --metrics-listen 127.0.0.1:0)") }
    return endpoint
}

struct GatewayTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A scratch directory removed at the end of a test.
func makeScratchDirectory(_ label: String) throws -> String {
    let path = NSTemporaryDirectory() + "latchkey-\(label)-\(UInt32.random(in: 0...UInt32.max))"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// An in-process identity that answers only what the gateway needs for session checks
/// (`identity.introspect`, `identity.health`), until the real identity implements them.
final class FakeIdentity: @unchecked Sendable {
    let loop: EventLoop
    let server: RPCServer
    let endpoint: Endpoint
    private let done = DispatchSemaphore(value: 0)

    init(sessions: [String: Int64], servedMethods: [String] = []) throws {
        loop = try EventLoop()
        let router = Router(workers: WorkerPool(threadCount: 1, maxQueued: 100), metrics: Metrics())
        for method in servedMethods {
            router.register(method, execution: .inline) { _, context in
                ["served": .string(method), "client": context.client.map(JSON.string) ?? .null]
            }
        }
        router.register("identity.introspect", execution: .inline) { params, _ in
            guard let token = params["session"]?.stringValue, let aal = sessions[token] else {
                throw RPCError(.unauthenticated, "no such session")
            }
            return [
                "user_id": "u1", "session_id": .string("s-" + token), "device_id": "d1", "aal": .int(aal), "aal2_at": .null,
                "expires_at": .int(WallClock.nowSeconds() + 3600), "required_factors": [],
                "step_up_until": aal >= 2 ? .int(WallClock.nowSeconds() + 600) : .null,
            ]
        }
        router.register("identity.health", execution: .inline) { _, _ in ["status": "ok", "replica_id": "fake-identity"] }
        server = RPCServer(
            loop: loop, limits: ServerLimits(), dispatcher: router, logger: Logger(service: "identity", sink: LogSink()),
            replicaID: "fake-identity", trustsCallerMeta: true)
        endpoint = Endpoint(host: "127.0.0.1", port: try server.listen(on: Endpoint(host: "127.0.0.1", port: 0)).port)
        let thread = Thread { [loop, done] in
            loop.run()
            done.signal()
        }
        thread.start()
        let running = DispatchSemaphore(value: 0)
        loop.execute { running.signal() }
        running.wait()
    }

    /// Stops the loop; the loop and its handlers stay referenced until the process exits.
    func stop() {
        let server = self.server
        let stopped = DispatchSemaphore(value: 0)
        loop.execute {
            server.drain {}
            server.forceClose()
            stopped.signal()
        }
        stopped.wait()
        loop.stop()
        done.wait()
        KeptAlive.shared.keep(self)
    }
}

extension RPCResponse {
    var gatewayResult: JSON? { if case .success(let value) = outcome { value } else { nil } }
    var gatewayError: RPCError? { if case .failure(let value) = outcome { value } else { nil } }
}

/// Polls the gateway's operator health (`GET /healthz` on its metrics listener) until `service`
/// has `count` replicas up.
func waitForReplicas(_ metricsListener: Endpoint, service: String, count: Int, timeoutSeconds: Double = 10) throws -> JSON {
    let deadline = Date().addingTimeInterval(timeoutSeconds)
    while Date() < deadline {
        let health = try OperatorListener.health(metricsListener)
        if (health["services"]?[service]?["up"]?.intValue ?? 0) >= Int64(count) { return health }
        usleep(50_000)
    }
    throw GatewayTestError("\(service) never had \(count) replicas up")
}

/// Requests a replica served for a method, from its own metrics (unimplemented methods count as `unknown`).
func servedCount(_ replica: Endpoint, service: String, methods: [String]) throws -> Int64 {
    let metrics = try LineClient(replica).result("\(service).metrics")
    return methods.reduce(0) { $0 + (metrics["methods"]?[$1]?["count"]?.intValue ?? 0) }
}
