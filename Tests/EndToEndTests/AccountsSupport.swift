import Foundation
import LineProtocol
import Platform
import RPC
import Runtime
import ServiceKit
import StackLauncher
import XCTest

/// identity and verification stand-ins served in the test process, on one ephemeral port:
/// `identity.introspect` maps `lks_<user>` to `<user>`; `verification.start/check/status`
/// keep payload-bound, single-use codes in memory. Enough for accounts to be tested for real
/// over TCP before the real services land.
final class FakeUpstreams: @unchecked Sendable {
    struct Code {
        var userID: String
        var payload: JSON
        var code: String
        var verified = false
    }

    let loop: EventLoop
    let workers = WorkerPool(threadCount: 8, maxQueued: 10_000, name: "fakes")
    let server: RPCServer
    private(set) var endpoint = Endpoint(host: "127.0.0.1", port: 0)
    private let lock = NSLock()
    private var codes: [String: Code] = [:]
    private var counter = 0
    private var thread: Thread?

    static let replicaID = "fakevr"

    init() throws {
        loop = try EventLoop()
        let router = Router(workers: workers, metrics: Metrics())
        server = RPCServer(
            loop: loop, limits: ServerLimits(), dispatcher: router, logger: Logger(service: "fakes", sink: LogSink()),
            replicaID: Self.replicaID, trustsCallerMeta: true)
        register(router)
        let address = try server.listen(on: Endpoint(host: "127.0.0.1", port: 0))
        endpoint = Endpoint(host: "127.0.0.1", port: address.port)
        let loop = self.loop
        let thread = Thread { loop.run() }
        thread.start()
        self.thread = thread
    }

    func stop() {
        loop.stop()
        workers.shutdownAndJoin()
    }

    /// The code the user's phone would get for `requestID`.
    func code(_ requestID: String) -> Code? {
        lock.lock()
        defer { lock.unlock() }
        return codes[requestID]
    }

    private func register(_ router: Router) {
        for service in ["identity", "verification"] {
            router.register("\(service).health", execution: .inline) { _, _ in
                ["status": "ok", "service": .string(service), "replica_id": .string(Self.replicaID)]
            }
        }
        router.register("identity.introspect") { params, _ in
            let token = try params.string("session")
            guard token.hasPrefix("lks_"), token.count > 4 else { throw RPCError(.unauthenticated, "unknown session") }
            let user = String(token.dropFirst(4))
            return [
                "user_id": .string(user), "session_id": .string("s-\(user)"), "device_id": "d", "aal": 2,
                "aal2_at": .null, "expires_at": 4_000_000_000, "required_factors": [], "step_up_until": 4_000_000_000,
            ]
        }
        router.register("verification.start") { [unowned self] params, _ in
            let userID = try params.string("user_id")
            guard try params.string("purpose") == "transaction", try params.string("channel") == "sms" else {
                throw RPCError.invalidParams("unexpected purpose or channel")
            }
            let payload = JSON.object(try params.optionalObject("payload") ?? [:])
            lock.lock()
            defer { lock.unlock() }
            counter += 1
            let requestID = "vr_\(Self.replicaID)_\(counter)"
            codes[requestID] = Code(userID: userID, payload: payload, code: String(100_000 + counter % 900_000))
            return ["request_id": .string(requestID)]
        }
        router.register("verification.check") { [unowned self] params, _ in
            let requestID = try params.string("request_id")
            let code = try params.string("code")
            let payload = JSON.object(try params.optionalObject("payload") ?? [:])
            lock.lock()
            defer { lock.unlock() }
            guard var entry = codes[requestID] else { throw RPCError(.notFound, "no such request") }
            if entry.verified { throw RPCError(.conflict, "already verified", extra: ["status": "verified"]) }
            guard entry.code == code, entry.payload == payload else {
                throw RPCError(.invalidCode, "wrong code", extra: ["attempts_left": 2])
            }
            entry.verified = true
            codes[requestID] = entry
            return ["status": "verified", "user_id": .string(entry.userID)]
        }
        router.register("verification.cancel") { [unowned self] params, _ in
            let requestID = try params.string("request_id")
            lock.lock()
            defer { lock.unlock() }
            guard codes[requestID] != nil else { throw RPCError(.notFound, "no such request") }
            codes.removeValue(forKey: requestID)
            return ["status": "cancelled"]
        }
        router.register("verification.status") { [unowned self] params, _ in
            let requestID = try params.string("request_id")
            lock.lock()
            defer { lock.unlock() }
            guard let entry = codes[requestID] else { throw RPCError(.notFound, "no such request") }
            return ["request_id": .string(requestID), "status": .string(entry.verified ? "verified" : "pending")]
        }
    }
}

/// The real `accounts` executable, on an ephemeral port first and the same port after a restart.
final class AccountsProcessUnderTest {
    let dataDirectory: String
    let upstream: Endpoint
    let extraArguments: [String]
    private(set) var process: Process?
    private(set) var endpoint = Endpoint(host: "127.0.0.1", port: 0)
    private var logPath: String { (dataDirectory as NSString).appendingPathComponent("accounts.log") }

    init(dataDirectory: String, upstream: Endpoint, extraArguments: [String] = []) {
        self.dataDirectory = dataDirectory
        self.upstream = upstream
        self.extraArguments = extraArguments
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Starts the process (on the port it had before, if any) and waits for its `listening` line.
    func start() throws {
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        let before = log.split(separator: "\n").filter { $0.contains("\"msg\":\"listening\"") }.count
        let process = Process()
        // `ACCOUNTS_TEST_BINARY` runs another build (say, release) of the executable under the same tests.
        let binary = ProcessInfo.processInfo.environment["ACCOUNTS_TEST_BINARY"]
            ?? executablePath("accounts")
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "--listen", "127.0.0.1:\(endpoint.port)", "--data-dir", dataDirectory,
            "--identity", upstream.description, "--verification", upstream.description, "--log-level", "info",
        ] + extraArguments
        if !FileManager.default.fileExists(atPath: logPath) { _ = FileManager.default.createFile(atPath: logPath, contents: nil) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        handle.seekToEndOfFile()
        process.standardError = handle
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let text = log
            let lines = text.split(separator: "\n").filter { $0.contains("\"msg\":\"listening\"") }
            if lines.count > before, let line = lines.last, let range = line.range(of: "\"net.listen\":\"") {
                let rest = line[range.upperBound...]
                if let end = rest.firstIndex(of: "\""), let bound = Endpoint(String(rest[..<end])) {
                    endpoint = bound
                    return
                }
            }
            guard process.isRunning else { throw ConfigurationError("accounts exited early:\n\(text)") }
            usleep(20_000)
        }
        throw ConfigurationError("accounts did not listen:\n\(log)")
    }

    func kill(_ signal: Int32 = SIGKILL) {
        guard let process, process.isRunning else { return }
        Glibc.kill(process.processIdentifier, signal)
        process.waitUntilExit()
    }

    /// SIGTERM and wait: the exit status (0 after a clean drain).
    func terminate() -> Int32 {
        kill(SIGTERM)
        return process?.terminationStatus ?? -1
    }
}
