import FoundationEssentials
import Glibc
import Platform

/// The whole Latchkey stack as real child processes: identity, verification (one or more
/// replicas), accounts, reset, then the gateway, each started once the ones it calls listen.
/// Used by `latchkey up`, `latchkey bench` and the end-to-end tests.
public final class Stack: @unchecked Sendable {
    public struct Options: Sendable {
        /// The directory of the `latchkey` executable (beside the test bundle in a build).
        public var binDirectory: String
        public var dataDirectory: String
        public var host = "127.0.0.1"
        /// The gateway's port; the services follow it (identity +1 ... reset +4, extra
        /// verification replicas +12, +22, ...), the HTTP door sits at +80 and the operator's
        /// metrics listener at +85. nil: every process on an ephemeral port (tests, bench).
        public var basePort: Int?
        /// Replicas per service (default 1). With SQLite only verification (and the gateway) may
        /// have more; with `LATCHKEY_DATABASE_URL` in `environment` every service may.
        public var replicas: [String: Int] = [:]
        public var verificationReplicas: Int {
            get { replicas["verification"] ?? 1 }
            set { replicas["verification"] = newValue }
        }
        /// Extra environment for every process (e.g. `LATCHKEY_SCRYPT_LOG_N`).
        public var environment: [String: String] = [:]
        /// Extra environment per service name.
        public var serviceEnvironment: [String: [String: String]] = [:]
        /// A file-size limit (`ulimit -f`, in KiB) per service: how the fault tests fill a "disk".
        public var fileSizeLimitKilobytes: [String: Int] = [:]

        public init(binDirectory: String, dataDirectory: String) {
            self.binDirectory = binDirectory
            self.dataDirectory = dataDirectory
        }
    }

    public final class Member: @unchecked Sendable {
        public let service: String
        public let replicaID: String
        public fileprivate(set) var endpoint: Endpoint
        public fileprivate(set) var process: ChildProcess
        let arguments: [String]
        let environment: [String: String]
        public let logPath: String
        /// Where this stack's first run of the process began writing: earlier runs' lines in the
        /// same (appended) file are not this stack's.
        public let logStartOffset: Int

        init(service: String, replicaID: String, endpoint: Endpoint, process: ChildProcess, arguments: [String], environment: [String: String], logPath: String, logStartOffset: Int) {
            self.service = service
            self.replicaID = replicaID
            self.endpoint = endpoint
            self.process = process
            self.arguments = arguments
            self.environment = environment
            self.logPath = logPath
            self.logStartOffset = logStartOffset
        }

        /// Everything the process wrote to stderr since this stack started it (structured log lines).
        public var log: String { Stack.readFile(logPath, from: logStartOffset) }
    }

    public let options: Options
    public private(set) var members: [Member] = []
    /// Every child's standard input: the stack ends with the process that started it.
    private let lifeline: Lifeline
    /// Where each process is started from: a link named after its service (`makeServiceLinks`).
    private let serviceLinks: String

    public static let defaultBasePort = 7400
    public static let portOffsets = ["gateway": 0, "identity": 1, "verification": 2, "accounts": 3, "reset": 4]
    public static let httpPortOffset = 80
    public static let metricsPortOffset = 85
    public static let startOrder = ["identity", "verification", "accounts", "reset", "gateway"]

    private init(options: Options) throws {
        self.options = options
        // The services' databases and the outbox live here: owner-only, like a service makes it.
        try FileManager.default.createDirectory(
            atPath: options.dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        serviceLinks = try Self.makeServiceLinks(binDirectory: options.binDirectory, dataDirectory: options.dataDirectory)
        lifeline = try Lifeline()
    }

    /// Starts every process and waits until each listens. On failure, stops what started.
    public static func start(_ options: Options) throws -> Stack {
        let stack = try Stack(options: options)
        do {
            if let basePort = options.basePort { try checkPortsFree(host: options.host, ports: fixedPorts(options, basePort: basePort)) }
            for service in startOrder {
                let replicas = options.replicas[service] ?? 1
                for index in 0..<replicas { try stack.launch(service: service, index: index) }
            }
        } catch {
            stack.stop()
            throw error
        }
        return stack
    }

    public var gateway: Endpoint { endpoint("gateway") }

    /// The gateway's HTTP door, read from its `http.listen` log line; nil when it is off.
    public var httpGateway: Endpoint? { loggedEndpoint("http.listen", of: member("gateway")) }

    /// A gateway's operator listener (`GET /metrics`, `GET /healthz`), from its `metrics.listen`
    /// log line; nil when it is off.
    public func metricsEndpoint(replica: Int = 0) -> Endpoint? { loggedEndpoint("metrics.listen", of: member("gateway", replica: replica)) }

    private func loggedEndpoint(_ field: String, of member: Member) -> Endpoint? {
        let log = member.log
        guard let range = log.firstRange(of: "\"\(field)\":\""), let end = log[range.upperBound...].firstIndex(of: "\"") else { return nil }
        return Endpoint(String(log[range.upperBound..<end]))
    }

    public var outboxPath: String { options.dataDirectory.appendingPathComponent("outbox.jsonl") }

    public func member(_ service: String, replica: Int = 0) -> Member {
        members.filter { $0.service == service }[replica]
    }

    public func endpoint(_ service: String, replica: Int = 0) -> Endpoint { member(service, replica: replica).endpoint }

    /// The comma-separated replica list of a service, as the other processes are told.
    public func replicaList(_ service: String) -> String {
        members.filter { $0.service == service }.map(\.endpoint.description).joined(separator: ",")
    }

    private func launch(service: String, index: Int) throws {
        let replicaID = index == 0 ? service : "\(service)-\(index + 1)"
        let port = options.basePort.map { $0 + Self.portOffsets[service]! + 10 * index } ?? 0
        var dataDirectory = options.dataDirectory
        if index > 0 { dataDirectory = dataDirectory.appendingPathComponent(replicaID) }
        var environment = ProcessInfo.processInfo.environment
        environment.merge(options.environment) { _, new in new }
        environment.merge(options.serviceEnvironment[service] ?? [:]) { _, new in new }
        environment.merge(Lifeline.environment) { _, new in new }
        environment["LATCHKEY_DATA_DIR"] = dataDirectory
        environment["LATCHKEY_OUTBOX"] = outboxPath
        environment["LATCHKEY_REPLICA_ID"] = replicaID
        for dependency in ["identity", "verification", "accounts", "reset"] where members.contains(where: { $0.service == dependency }) {
            environment["LATCHKEY_\(dependency.uppercased())"] = replicaList(dependency)
        }
        if service == "gateway" {
            for (variable, offset) in [("LATCHKEY_HTTP_LISTEN", Self.httpPortOffset), ("LATCHKEY_METRICS_LISTEN", Self.metricsPortOffset)]
            where environment[variable] == nil {
                environment[variable] = "\(options.host):\(options.basePort.map { $0 + offset + 10 * index } ?? 0)"
            }
        }
        let arguments = ["--listen", "\(options.host):\(port)"]
        let logPath = options.dataDirectory.appendingPathComponent("\(replicaID).log")
        let logStartOffset = fileSize(atPath: logPath)
        let process = try spawn(
            service: service, arguments: arguments, environment: environment, logPath: logPath,
            fileSizeLimitKilobytes: options.fileSizeLimitKilobytes[service])
        let bound = try waitForListening(process: process, logPath: logPath, logStartOffset: logStartOffset, service: replicaID)
        members.append(Member(
            service: service, replicaID: replicaID, endpoint: bound, process: process,
            arguments: ["--listen", bound.description], environment: environment, logPath: logPath,
            logStartOffset: logStartOffset))
    }

    private func spawn(service: String, arguments: [String], environment: [String: String], logPath: String, fileSizeLimitKilobytes: Int?) throws -> ChildProcess {
        let executable = serviceLinks.appendingPathComponent(service)
        let log = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard log >= 0 else { throw SystemError(call: "open \(logPath)", errno: errno) }
        defer { close(log) }
        let streams = (input: ChildProcess.Stream.descriptor(lifeline.childEnd), output: ChildProcess.Stream.null, error: ChildProcess.Stream.descriptor(log))
        if let limit = fileSizeLimitKilobytes {
            // POSIX sh counts `ulimit -f` in 512-byte blocks (dash, and bash in POSIX mode).
            return try ChildProcess(
                executable: "/bin/sh", arguments: ["-c", "ulimit -f \(limit * 2) && exec \"$0\" \"$@\"", executable] + arguments,
                environment: environment, standardInput: streams.input, standardOutput: streams.output, standardError: streams.error)
        }
        return try ChildProcess(
            executable: executable, arguments: arguments, environment: environment,
            standardInput: streams.input, standardOutput: streams.output, standardError: streams.error)
    }

    /// Reads what the process logged in this run until its `listening` line gives the bound
    /// address. An error line or an exit before it fails the start, naming a port in use.
    private func waitForListening(process: ChildProcess, logPath: String, logStartOffset: Int, service: String, timeoutSeconds: Double = 20) throws -> Endpoint {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while Date() < deadline {
            let log = Stack.readFile(logPath, from: logStartOffset)
            if let endpoint = Self.listeningEndpoint(in: log) { return endpoint }
            if !process.isRunning {
                process.waitUntilExit()
                let finalLog = Stack.readFile(logPath, from: logStartOffset)
                if let port = Self.portInUse(in: finalLog) { throw StackStartError(Self.portInUseMessage(port)) }
                throw StackStartError("\(service) exited with status \(process.terminationStatus) before listening:\n\(finalLog)")
            }
            Pause.milliseconds(20)
        }
        throw StackStartError("\(service) did not start listening within \(Int(timeoutSeconds)) s")
    }

    /// The address of the `"msg":"listening"` line (never of an error line that also names `net.listen`).
    static func listeningEndpoint(in log: String) -> Endpoint? {
        for line in log.split(separator: "\n") where line.contains("\"msg\":\"listening\"") {
            guard let range = line.firstRange(of: "\"net.listen\":\""),
                  let end = line[range.upperBound...].firstIndex(of: "\"") else { continue }
            return Endpoint(String(line[range.upperBound..<end]))
        }
        return nil
    }

    /// The port of a failed bind ("bind(127.0.0.1:7401) failed: Address already in use") in a log.
    static func portInUse(in log: String) -> Int? {
        for line in log.split(separator: "\n") where line.contains("(errno \(EADDRINUSE))") {
            guard let bind = line.firstRange(of: "bind("), let close = line[bind.upperBound...].firstIndex(of: ")") else { continue }
            return Endpoint(String(line[bind.upperBound..<close]))?.port
        }
        return nil
    }

    /// Every fixed port a stack on `basePort` uses: each replica of each service, and each
    /// gateway's HTTP door and metrics listener (replica i of a service is 10 * i above the first).
    static func fixedPorts(_ options: Options, basePort: Int) -> [Int] {
        var ports: [Int] = []
        for (service, offset) in portOffsets {
            for index in 0..<(options.replicas[service] ?? 1) {
                ports.append(basePort + offset + 10 * index)
                if service == "gateway" { ports += [basePort + httpPortOffset + 10 * index, basePort + metricsPortOffset + 10 * index] }
            }
        }
        return ports.sorted()
    }

    static func portInUseMessage(_ port: Int) -> String { "port \(port) is in use: is another stack running?" }

    /// Binds each fixed port once before starting anything, so a clash is named before any
    /// process starts (and before the demo user is attempted against someone else's stack).
    private static func checkPortsFree(host: String, ports: [Int]) throws {
        for port in ports {
            guard let address = try SocketAddress.resolve(host: host, port: port).first else { continue }
            let probe: Socket
            do {
                probe = try Socket.listen(on: address)
            } catch {
                guard error.errno == EADDRINUSE else { throw error }
                throw StackStartError(portInUseMessage(port))
            }
            probe.close()
        }
    }

    // MARK: Faults and lifecycle

    /// Sends a signal (SIGKILL by default) to one process and waits for it to end.
    public func kill(_ service: String, replica: Int = 0, signal: Int32 = SIGKILL) {
        let member = member(service, replica: replica)
        guard member.process.isRunning else { return }
        LibC.kill(member.process.processIdentifier, signal)
        member.process.waitUntilExit()
    }

    /// SIGTERM, wait, and return the exit status (0 after a clean drain).
    @discardableResult
    public func terminate(_ service: String, replica: Int = 0) -> Int32 {
        kill(service, replica: replica, signal: SIGTERM)
        return member(service, replica: replica).process.terminationStatus
    }

    /// Starts a stopped process again on the same address, with the same data (and no file-size
    /// limit unless one is given: a fault test lifts its "full disk" this way).
    public func restart(_ service: String, replica: Int = 0, fileSizeLimitKilobytes: Int? = nil) throws {
        let member = member(service, replica: replica)
        precondition(!member.process.isRunning, "restart of a running \(service)")
        // Only what this start writes counts: a fast child may log `listening` before we look.
        let offset = fileSize(atPath: member.logPath)
        let process = try spawn(
            service: service, arguments: member.arguments, environment: member.environment, logPath: member.logPath,
            fileSizeLimitKilobytes: fileSizeLimitKilobytes)
        do {
            _ = try waitForListening(process: process, logPath: member.logPath, logStartOffset: offset, service: service)
        } catch {
            if process.isRunning { LibC.kill(process.processIdentifier, SIGKILL) }
            throw error
        }
        member.process = process
    }

    /// SIGTERM to every process, the gateway first, and waits for each.
    public func stop() {
        for member in members.reversed() where member.process.isRunning {
            LibC.kill(member.process.processIdentifier, SIGTERM)
        }
        for member in members.reversed() {
            let deadline = Date().addingTimeInterval(15)
            while member.process.isRunning && Date() < deadline { Pause.milliseconds(10) }
            if member.process.isRunning {
                LibC.kill(member.process.processIdentifier, SIGKILL)
                member.process.waitUntilExit()
            }
        }
    }

    /// A (small) file as text from `offset` on, with plain read(2): Foundation's file readers leak on Linux.
    public static func readFile(_ path: String, from offset: Int = 0) -> String {
        String(decoding: readBytes(path, from: offset), as: UTF8.self)
    }

    /// The file's bytes from `offset` to its end; none when it cannot be read.
    public static func readBytes(_ path: String, from offset: Int = 0) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        if offset > 0 && lseek(fd, off_t(offset), SEEK_SET) < 0 { return [] }
        return LibC.readToEnd(fd)
    }

    /// The directory of `latchkey` next to the running binary (or test bundle).
    public static func siblingBinaryDirectory() -> String {
        var path = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        // A test bundle runs as `.../debug/LatchkeyPackageTests.xctest`; executables sit beside it.
        while path.pathComponents.count > 1 {
            path.deleteLastPathComponent()
            if FileManager.default.isExecutableFile(atPath: path.appendingPathComponent("latchkey").path) { return path.path }
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path
    }
}

/// Why a service of the stack did not come up: its exit status and log, a port in use, or no
/// `listening` line before the deadline.
public struct StackStartError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
