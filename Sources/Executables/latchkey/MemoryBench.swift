import FoundationEssentials
import Glibc
import LineProtocol
import Platform
import RPC
import ServiceKit
import StackLauncher

/// `memory`: resident memory of each process of a fresh stack at idle, as
/// `ps` sees it (`VmRSS`, split into anonymous and file-backed pages), and its proportional share
/// (`Pss`: pages shared with other processes count a share each; the stack's sum is what the
/// host really spends, and what separate static executables would have doubled), next
/// to two peers measured in the same run: a process of this same build that does nothing (what
/// the Swift runtime, Foundation and the C libraries cost before any Latchkey code runs) and an
/// idle `redis-server` when installed. Then the gateway's growth per 1,000 idle connections
/// (each answered one `gateway.ping`, then left open), and Redis's for the same connections.
enum MemoryBench {
    /// The hidden scenario the baseline process runs: it waits until its stdin closes.
    static let idleScenario = "idle-process"
    static let defaultIdleConnections = 4000

    static func run(settings: BenchSettings, idleConnections: Int?) throws {
        let connections = idleConnections ?? defaultIdleConnections
        let environment = BenchEnvironment(settings: settings, explicitGateway: nil) { options in
            // One address opens every connection: lift the per-address cap and the ping bucket.
            options.serviceEnvironment["gateway", default: [:]]["LATCHKEY_MAX_CONNECTIONS_PER_ADDRESS"] = "20000"
            options.serviceEnvironment["gateway", default: [:]]["LATCHKEY_RATE_LIMITS"] = "ping=0:1,observe=0:1,auth=0:1,codes=0:1,reset=0:1,default=0:1"
        }
        defer { environment.shutdown() }
        let stack = try environment.stack()
        // Every service answers once (first-use work done), then the figures are read.
        for service in Stack.startOrder { _ = try LineClient(stack.endpoint(service)).result("\(service).ping") }
        var table = TextTable(["process", "VmRSS", "RssAnon", "RssFile", "PSS", "threads"])
        var stackProportional = 0
        for member in stack.members {
            let memory = try ProcessMemory.read(pid: member.process.processIdentifier)
            stackProportional += memory.proportionalKilobytes
            table.add(cells(member.replicaID, memory))
        }
        table.add(["stack, summed", "", "", "", megabytes(stackProportional), ""])
        // Built as one binary, this process maps the services' file too and takes a share of its pages.
        table.add(cells("this bench process", try ProcessMemory.read(pid: getpid())))
        if let baseline = try? idleProcessOfThisBuild() { table.add(cells("peer: idle process of this build", baseline)) }
        let redis = RedisPeer.start()
        defer { redis?.stop() }
        if let redis { table.add(cells("peer: redis-server, idle", try ProcessMemory.read(pid: redis.pid))) }
        print(table.text, terminator: "")

        let gateway = stack.member("gateway").process.processIdentifier
        let growth = try perThousandIdle(pid: gateway, connections: connections) { try pingedGatewayConnection(stack.gateway) }
        print("gateway: \(growth.fixed(2)) MB per 1,000 idle connections (\(connections) connections, each answered one gateway.ping)")
        if let redis {
            let peer = try perThousandIdle(pid: redis.pid, connections: connections) { try pingedRedisConnection(port: redis.port) }
            print("peer: redis-server \(peer.fixed(2)) MB per 1,000 idle connections (the same, PING)")
        }
        print("(binaries from \(Stack.siblingBinaryDirectory()); kernel socket buffers are not in a process's RSS)")
        fflush(nil)
    }

    /// The hidden `idle-process` scenario: nothing but waiting, so its RSS is the build's floor.
    static func idle() -> Int32 {
        var byte: UInt8 = 0
        while read(0, &byte, 1) > 0 {}
        return 0
    }

    private static func cells(_ name: String, _ memory: ProcessMemory) -> [String] {
        [
            name, megabytes(memory.residentKilobytes), megabytes(memory.anonymousKilobytes), megabytes(memory.fileKilobytes),
            megabytes(memory.proportionalKilobytes), String(memory.threads),
        ]
    }

    private static func megabytes(_ kilobytes: Int) -> String { (Double(kilobytes) / 1024).fixed(1) + " MB" }

    /// RSS growth, in MB per 1,000, while `connections` connections opened by `open` stay open.
    private static func perThousandIdle<Connection>(pid: Int32, connections: Int, open: () throws -> Connection) throws -> Double {
        var held = [try open()]  // the first one pays for whatever a first connection allocates once
        let before = try ProcessMemory.read(pid: pid).residentKilobytes
        for _ in 0..<connections { held.append(try open()) }
        let after = try ProcessMemory.read(pid: pid).residentKilobytes
        withExtendedLifetime(held) {}
        return Double(after - before) / 1024 / Double(connections) * 1000
    }

    private static func pingedGatewayConnection(_ gateway: Endpoint) throws -> LineClient {
        let client = try LineClient(gateway)
        _ = try client.result("gateway.ping")
        return client
    }

    private static func pingedRedisConnection(port: Int) throws -> LineClient {
        let client = try LineClient(Endpoint(host: "127.0.0.1", port: port))
        try client.sendRaw(Array("PING\r\n".utf8))
        guard let answer = try client.readLine(), answer.starts(with: Array("+PONG".utf8)) else {
            throw ConfigurationError("redis-server did not answer PING")
        }
        return client
    }

    /// `latchkey bench idle-process` started from this very binary, measured, then ended.
    private static func idleProcessOfThisBuild() throws -> ProcessMemory {
        let input = try ChildPipe()
        let process: ChildProcess
        do {
            process = try ChildProcess(
                executable: Stack.siblingBinaryDirectory().appendingPathComponent("latchkey"), arguments: ["bench", idleScenario],
                environment: ProcessInfo.processInfo.environment, standardInput: .descriptor(input.readEnd))
        } catch {
            close(input.readEnd)
            close(input.writeEnd)
            throw error
        }
        close(input.readEnd)
        defer {
            close(input.writeEnd)  // its end of file ends the idle process
            process.waitUntilExit()
        }
        // Its RSS rises while it starts, then holds: read it once two readings 100 ms apart agree.
        var previous = -1
        let deadline = MonotonicClock.nowMilliseconds() + 5000
        while MonotonicClock.nowMilliseconds() < deadline {
            let memory = try ProcessMemory.read(pid: process.processIdentifier)
            if memory.residentKilobytes == previous { return memory }
            previous = memory.residentKilobytes
            Pause.milliseconds(100)
        }
        return try ProcessMemory.read(pid: process.processIdentifier)
    }
}

/// The figures of `/proc/PID/status` and `/proc/PID/smaps_rollup` this bench prints.
struct ProcessMemory {
    let residentKilobytes: Int
    let anonymousKilobytes: Int
    let fileKilobytes: Int
    let proportionalKilobytes: Int
    let threads: Int

    static func read(pid: Int32) throws -> ProcessMemory {
        let status = try fields(of: "/proc/\(pid)/status")
        let rollup = try fields(of: "/proc/\(pid)/smaps_rollup")
        guard let resident = status["VmRSS"], let anonymous = status["RssAnon"], let file = status["RssFile"], let threads = status["Threads"],
            let proportional = rollup["Pss"]
        else {
            throw ConfigurationError("/proc/\(pid) has no VmRSS, RssAnon, RssFile, Threads or Pss")
        }
        return ProcessMemory(
            residentKilobytes: resident, anonymousKilobytes: anonymous, fileKilobytes: file, proportionalKilobytes: proportional, threads: threads)
    }

    /// `Name: value [kB]` lines as numbers by name.
    private static func fields(of path: String) throws -> [String: Int] {
        var fields: [String: Int] = [:]
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "\t" })
            if parts.count >= 2, let value = Int(parts[1]) { fields[String(parts[0])] = value }
        }
        return fields
    }
}

/// A `redis-server` on a free loopback port, without persistence: the peer of the ping bench
/// (under redis-benchmark) and of the memory bench (idle).
final class RedisPeer {
    let port: Int
    private let process: ChildProcess
    var pid: Int32 { process.processIdentifier }

    private init(port: Int, process: ChildProcess) {
        self.port = port
        self.process = process
    }

    static func start() -> RedisPeer? {
        guard let server = RedisCeilingBench.executable("redis-server"), let port = RedisCeilingBench.freePort() else { return nil }
        guard let process = try? ChildProcess(
            executable: server,
            arguments: ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no", "--maxclients", "20000"],
            environment: ProcessInfo.processInfo.environment, standardOutput: .null, standardError: .null)
        else { return nil }
        let redis = RedisPeer(port: port, process: process)
        guard RedisCeilingBench.waitUntilListening(port: port, timeoutMilliseconds: 5000) else {
            redis.stop()
            return nil
        }
        return redis
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}
