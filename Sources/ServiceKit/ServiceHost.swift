import Contract
import Dispatch
import FoundationEssentials
import LineProtocol
import Platform
import RPC
import Runtime

/// Everything one service process needs: configuration, logger, event loops, worker pool,
/// metrics, its method table, clients for the services it calls, and a lifecycle that
/// drains on SIGTERM/SIGINT and exits 0.
public final class ServiceHost: @unchecked Sendable {
    public let name: String
    public let configuration: Configuration
    public let logger: Logger
    /// Every loop of the process (`--event-loops`): connections are spread over them.
    public let loopGroup: EventLoopGroup
    /// The main loop: listeners, timers and the internal clients (`client(for:)`) live here.
    public let loop: EventLoop
    public let workers: WorkerPool
    public let metrics = Metrics()
    public let router: Router
    public let limits: ServerLimits
    public let replicaID: String
    public let dataDirectory: String
    public let listenEndpoint: Endpoint
    private let drainTimeoutMilliseconds: Int64
    private let stopsOnStdinClose: Bool
    private var server: RPCServer?
    private var clients: [String: RPCClient] = [:]
    private var healthChecks: [@Sendable () -> (String, JSON)] = []
    private var signalSources: [DispatchSourceSignal] = []
    private var lifeline: LauncherLifeline?

    /// Reads flags and `LATCHKEY_*` variables: the common options plus `extraOptions`.
    /// `keepsData`: false for a process without a database (the gateway), which its first log line says.
    public init(
        name: String, defaultPort: Int, arguments: [String], environment: [String: String], extraOptions: [ConfigOption] = [],
        keepsData: Bool = true
    ) throws {
        try HelpRequested.check(arguments, usage: Usage.text("\(name) [OPTIONS]", options: CommonOptions.all + extraOptions))
        TerminationSignals.block()
        ignoreBrokenPipeSignals()
        // Everything a service writes (databases, outbox, keys, the directories holding them) holds
        // personal data or secrets: owner-only, whatever umask the process was started with.
        umask(0o077)
        self.name = name
        let configuration = try Configuration(arguments: arguments, environment: environment, options: CommonOptions.all + extraOptions)
        self.configuration = configuration
        guard let level = Logger.Level(name: configuration.string(CommonOptions.logLevel) ?? "info") else {
            throw ConfigurationError("--log-level must be debug, info, warning or error")
        }
        let requestedReplicaID = configuration.string(CommonOptions.replicaID) ?? name
        replicaID = try Self.validReplicaID(requestedReplicaID == "auto" ? Self.hostReplicaID() : requestedReplicaID)
        logger = Logger(service: name, minimumLevel: level).with(["replica": .string(replicaID)])
        listenEndpoint = configuration.isSet(CommonOptions.listen)
            ? try configuration.endpoint(CommonOptions.listen) : Endpoint(host: "127.0.0.1", port: defaultPort)
        dataDirectory = configuration.string(CommonOptions.dataDirectory) ?? "./.latchkey"
        limits = try ServerLimits(configuration)
        drainTimeoutMilliseconds = Int64(try configuration.int(CommonOptions.drainTimeoutMilliseconds, range: 0...600_000))
        stopsOnStdinClose = try configuration.bool(CommonOptions.stopOnStdinClose)
        let workerCount = try configuration.int(CommonOptions.workerThreads, range: 1...512)
        workers = WorkerPool(
            threadCount: workerCount,
            maxQueued: try configuration.int(CommonOptions.workerQueueDepth, range: 1...1_000_000), name: name)
        guard let backend = EventBackendKind(rawValue: configuration.string(CommonOptions.eventBackend) ?? EventBackendKind.platformDefault.rawValue) else {
            throw ConfigurationError("--event-backend must be one of \(EventBackendKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        EventBackendKind.processDefault = backend
        let loopCount = configuration.isSet(CommonOptions.eventLoops)
            ? try configuration.int(CommonOptions.eventLoops, range: 1...EventLoopGroup.maxLoops) : EventLoopGroup.defaultCount
        loopGroup = try EventLoopGroup(count: loopCount, backend: backend)
        loop = loopGroup.main
        router = Router(workers: workers, metrics: metrics)
        registerBuiltins()
        let storage = !keepsData ? "none" : (configuration.string(CommonOptions.databaseURL) ?? "").isEmpty ? "sqlite" : "postgres"
        // The first line of every process: what it runs on, before anything it does.
        logger.info("starting", [
            "version": .string(LatchkeyVersion.current), "event.backend": .string(backend.rawValue),
            "net.event_loops": .int(Int64(loopGroup.loops.count)), "workers": .int(Int64(workerCount)), "db.backend": .string(storage),
        ])
    }

    /// Replica ids travel inside issued ids, so they are short and plain.
    private static func validReplicaID(_ value: String) throws -> String {
        let allowed = value.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-") }
        guard !value.isEmpty, value.utf8.count <= 32, allowed else {
            throw ConfigurationError("--replica-id must be 1-32 characters of a-z, 0-9 and -")
        }
        return value
    }

    /// `--replica-id auto`: the host name (a container's id under Docker), made safe for ids,
    /// so replicas started by `docker compose --scale` each get their own name.
    static func hostReplicaID() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count - 1)
        let host = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased()
        let safe = host.unicodeScalars.map { scalar -> Character in
            let allowed = ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar)
            return allowed ? Character(scalar) : "-"
        }
        let trimmed = String(String(safe).prefix(32))
        return trimmed.isEmpty ? "replica" : trimmed
    }

    /// Creates the data directory if needed (0700, as are any parents it creates) and returns the
    /// path of a file in it. An existing directory is left as the operator made it, with a warning
    /// when other users can enter it: it may be shared (a volume's mount point, a home directory).
    public func dataFile(_ fileName: String) throws -> String {
        if FileManager.default.fileExists(atPath: dataDirectory) {
            warnIfOthersCanEnter(dataDirectory)
        } else {
            try FileManager.default.createDirectory(
                atPath: dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        return dataDirectory.appendingPathComponent(fileName)
    }

    private var warnedAboutDataDirectory = false

    private func warnIfOthersCanEnter(_ directory: String) {
        var info = stat()
        guard !warnedAboutDataDirectory, stat(directory, &info) == 0, info.st_mode & 0o077 != 0 else { return }
        warnedAboutDataDirectory = true
        logger.warning("data directory is open to other users; its files are owner-only, but chmod 700 it", [
            "data.dir": .string(directory), "data.mode": .string(String(info.st_mode & 0o777, radix: 8)),
        ])
    }

    /// A client for another service, from its replica option (`--identity` ...), on the host's
    /// loop. One per service.
    public func client(for service: String, option: ConfigOption) throws -> RPCClient {
        if let existing = clients[service] { return existing }
        let client = try makeClient(for: service, option: option, loop: loop)
        clients[service] = client
        return client
    }

    /// A new client for another service on `loop`: the one way services build internal clients,
    /// so every one of them carries the service token.
    public func makeClient(for service: String, option: ConfigOption, loop: EventLoop) throws -> RPCClient {
        RPCClient(
            loop: loop, service: service, endpoints: try configuration.endpoints(option),
            serviceToken: configuration.string(CommonOptions.serviceToken), logger: logger)
    }

    /// Adds a named check to `<name>.health` (for example: the database answers).
    public func addHealthCheck(_ check: @escaping @Sendable () -> (String, JSON)) {
        healthChecks.append(check)
    }

    private func registerBuiltins() {
        router.register(BuiltinContract.ping(name), execution: .inline) { _, _ in ["pong": true] }
        router.register(BuiltinContract.health(name), execution: .inline) { [unowned self] _, _ in
            var checks: [String: JSON] = [:]
            for check in healthChecks {
                let (checkName, value) = check()
                checks[checkName] = value
            }
            return [
                "status": "ok", "service": .string(name), "replica_id": .string(replicaID),
                "uptime_s": .int(metrics.uptimeSeconds),
                "connections": .int(Int64(server?.connectionCount ?? 0)),
                "inflight": .int(Int64(server?.inflightCount ?? 0)),
                "checks": .object(checks),
            ]
        }
        router.register(BuiltinContract.metrics(name), execution: .inline) { [unowned self] _, _ in
            var snapshot = metrics.snapshot().objectValue ?? [:]
            snapshot["workers"] = ["busy": .int(Int64(workers.busyCount)), "queued": .int(Int64(workers.queuedCount))]
            return .object(snapshot)
        }
    }

    /// Listens, serves until SIGTERM/SIGINT, drains, and returns the exit status (0 on a clean stop).
    public func run() -> Int32 {
        let server = RPCServer(
            group: loopGroup, limits: limits, dispatcher: router, logger: logger, replicaID: replicaID, trustsCallerMeta: true, metrics: metrics)
        server.requiredServiceToken = configuration.string(CommonOptions.serviceToken)
        self.server = server
        return Self.serve(server: server, endpoint: listenEndpoint, host: self)
    }

    /// Shared by services and the gateway: bind, log where, handle signals, drain.
    public static func serve(server: RPCServer, endpoint: Endpoint, host: ServiceHost) -> Int32 {
        let address: SocketAddress
        do {
            address = try server.listen(on: endpoint)
        } catch {
            host.logger.error("cannot listen", ["net.listen": .string(endpoint.description), "error": .string(String(describing: error))])
            return 1
        }
        // Handlers first: a client that sees `listening` may send SIGTERM at once.
        host.installSignalHandlers(server: server)
        do {
            try host.watchLauncher(server: server)
        } catch {
            host.logger.error("cannot watch standard input", ["error": .string(String(describing: error))])
            return 1
        }
        host.logger.info("listening", ["net.listen": .string(address.description), "net.event_loops": .int(Int64(host.loopGroup.loops.count))])
        host.loopGroup.startSecondaryLoops()
        host.loop.run()
        // The main loop stops once every loop's connections are drained and the workers have
        // ended (see `beginShutdown`): stop the other loops, then join every thread.
        host.loopGroup.stopSecondaryLoops()
        host.workers.shutdown()
        guard host.workers.awaitTermination(untilMilliseconds: MonotonicClock.nowMilliseconds()) else {
            host.exitWithoutCleanup(reason: "worker threads still running after the loop stopped", pool: host.workers)
        }
        host.logger.info("stopped")
        return 0
    }

    /// After the drain deadline, threads get this long to return before the process gives up on
    /// them (idle ones return at once; this covers their wake-up, not more work).
    static let threadGraceMilliseconds: Int64 = 1000

    /// For threads still running past the deadline: a normal exit would run at-exit cleanup
    /// (C library, OpenSSL) under their feet. Logs why, then ends at once with status 1.
    public func exitWithoutCleanup(reason: String, pool: WorkerPool) -> Never {
        logger.error("exiting without cleanup", [
            "exit.reason": .string(reason), "workers.busy": .int(Int64(pool.busyCount)), "workers.queued": .int(Int64(pool.queuedCount)),
        ])
        _exit(1)
    }

    private func installSignalHandlers(server: RPCServer) {
        // SIGTERM and SIGINT have been blocked in every thread since start (`TerminationSignals`):
        // one that came before this point waits, pending, for the source below. (Setting SIG_IGN
        // here, as before, would discard it, and a stop request sent at start-up was lost.)
        for signalNumber in [SIGTERM, SIGINT] {
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { [unowned self] in
                loop.execute { [unowned self] in beginShutdown(server: server) }
            }
            source.resume()
            signalSources.append(source)
        }
    }

    /// `--stop-on-stdin-close`: the launcher's end of standard input closing stops the service.
    private func watchLauncher(server: RPCServer) throws(SystemError) {
        guard stopsOnStdinClose else { return }
        lifeline = try LauncherLifeline(loop: loop) { [unowned self] in
            logger.info("launcher gone", ["stop.reason": "stdin_closed"])
            beginShutdown(server: server)
        }
    }

    private var extraListeners: [(drain: (@escaping () -> Void) -> Void, forceClose: () -> Void)] = []

    /// Another listener on this loop (the gateway's HTTP door), drained on SIGTERM with the main
    /// server; the loop stops once every one has finished. Call before `serve`.
    public func addListener(drain: @escaping (@escaping () -> Void) -> Void, forceClose: @escaping () -> Void) {
        extraListeners.append((drain, forceClose))
    }

    /// Shutdown order: stop accepting and answer what is in flight (connections drain), then end
    /// the worker threads while the loop still runs (a worker may be waiting on a call to another
    /// service, which needs the loop), then stop the loop; `serve` joins the workers. All within
    /// the drain deadline (+ `threadGraceMilliseconds`), else `exitWithoutCleanup`.
    private func beginShutdown(server: RPCServer) {
        guard server.state == .listening else { return }
        logger.info("draining", ["drain.inflight": .int(Int64(server.inflightCount)), "drain.timeout_ms": .int(drainTimeoutMilliseconds)])
        var remaining = 1 + extraListeners.count
        let finished = { [unowned self] in
            remaining -= 1
            if remaining == 0 { workers.shutdown() }
        }
        for listener in extraListeners { listener.drain(finished) }
        server.drain(completion: finished)
        let deadline = MonotonicClock.nowMilliseconds() + drainTimeoutMilliseconds
        var forced = false
        loop.scheduleRepeating(everyMilliseconds: 50) { [unowned self] in
            let now = MonotonicClock.nowMilliseconds()
            if remaining == 0 && workers.hasEnded {
                loop.stop()
            } else if !forced && remaining > 0 && now >= deadline {
                forced = true
                logger.warning("drain deadline passed; closing remaining connections")
                server.forceClose()
                for listener in extraListeners { listener.forceClose() }
            } else if now >= deadline + Self.threadGraceMilliseconds {
                exitWithoutCleanup(reason: "worker threads still running past the drain deadline", pool: workers)
            }
        }
    }
}
