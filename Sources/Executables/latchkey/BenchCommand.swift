import FoundationEssentials
import LineProtocol
import Platform
import Runtime
import ServiceKit
import StackLauncher

/// `latchkey bench SCENARIO`: measures throughput and latency. Starts its own stack on
/// ephemeral ports in a temporary directory unless `--address` names a running gateway.
/// Every scenario prints its ceiling (or baseline) measured in the same run next to it.
enum BenchCommand {
    static let connections = ConfigOption("connections", default: "8", help: "bench: concurrent connections")
    static let inflight = ConfigOption("inflight", default: "1", help: "bench: pipelined requests per connection (ping only)")
    static let seconds = ConfigOption("seconds", default: "5", help: "bench: seconds per measurement")
    static let target = ConfigOption("target", default: "both", help: "bench ping: gateway, a service name, or both")
    static let address = ConfigOption("address", help: "bench: a running gateway to measure instead of a fresh stack")
    static let json = ConfigOption("json", default: "false", help: "bench: print JSON lines instead of a table")
    static let options = [connections, inflight, seconds, target, address, json, UpCommand.postgres, BasePort.option]

    static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
        let configuration = try Configuration(arguments: arguments, environment: environment, options: options)
        guard let scenario = configuration.positional.first else { throw ConfigurationError("bench needs a scenario: ping, login, verify, transfer, reset, all, passkey, overload, long, postgres, memory") }
        if scenario == MemoryBench.idleScenario { return MemoryBench.idle() }
        warnOnDebugBuild()
        let settings = BenchSettings(
            connections: try configuration.int(connections, range: 1...10_000),
            inflight: try configuration.int(inflight, range: 1...1000),
            seconds: Double(try configuration.int(seconds, range: 1...3600)),
            asJSON: try configuration.bool(json))
        let running = configuration.isSet(address) || configuration.isSet(BasePort.option)
        let gateway = running ? Endpoint(try BasePort.address(of: "gateway", configuration, addressOption: address)) : nil
        if running && gateway == nil { throw ConfigurationError("\(address.flag) must be HOST:PORT") }
        let environment = BenchEnvironment(settings: settings, explicitGateway: gateway)
        defer { environment.shutdown() }
        let report = BenchReport(asJSON: settings.asJSON)
        let scenarios = scenario == "all" ? ["ping", "login", "verify", "transfer", "reset"] : [scenario]
        let progress = TerminalProgress()
        for (index, name) in scenarios.enumerated() {
            progress.show("bench \(index + 1)/\(scenarios.count): \(name) (starting the stack and measuring \(Int(settings.seconds)) s per row)...")
            defer { progress.clear() }
            switch name {
            case "ping": try PingBench.run(environment, target: configuration.string(target) ?? "both", report: report)
            case "login": try LoginBench.run(environment, report: report)
            case "verify": try VerifyBench.run(environment, report: report)
            case "transfer": try TransferBench.run(environment, report: report)
            case "reset": try ResetBench.run(environment, report: report)
            case "passkey": try PasskeyBench.run(environment, report: report)
            case "overload": try OverloadBench.run(environment, report: report)
            case "postgres": try PostgresBench.run(settings: settings, url: configuration.string(UpCommand.postgres), report: report)
            case "long": try LongHistoryBench.run(settings: settings, report: report)
            case "memory": try MemoryBench.run(settings: settings, idleConnections: configuration.isSet(connections) ? settings.connections : nil)
            default: throw ConfigurationError("unknown scenario \(name)")
            }
        }
        return 0
    }

    /// A debug build's figures are several times below the release build's: say so before they are read as the product's.
    private static func warnOnDebugBuild() {
        #if DEBUG
        StandardError.write(
            "latchkey bench: warning: this is a debug build; its figures are several times below a release build's (swift run -c release latchkey bench ...)\n")
        #endif
    }
}

struct BenchSettings: Sendable {
    let connections: Int
    let inflight: Int
    let seconds: Double
    let asJSON: Bool
}

/// The stack under measurement: a fresh one in a temporary directory, or a given gateway.
final class BenchEnvironment: @unchecked Sendable {
    let settings: BenchSettings
    private let explicitGateway: Endpoint?
    /// Event loops per process of the bench's own stack (`LATCHKEY_EVENT_LOOPS`, else the cores).
    let eventLoops: Int
    private var ownStack: Stack?
    private var temporaryDirectory: String?
    /// Changes to the bench's own stack (another storage backend, replicas).
    private let adjustStack: (inout Stack.Options) -> Void
    /// Runs on the fresh data directory before the stack starts (the `long` bench writes a history).
    var beforeStart: ((String) throws -> Void)?

    init(
        settings: BenchSettings, explicitGateway: Endpoint?, eventLoops: Int = EventLoopGroup.defaultCount,
        adjustStack: @escaping (inout Stack.Options) -> Void = { _ in }
    ) {
        self.settings = settings
        self.explicitGateway = explicitGateway
        self.eventLoops = eventLoops
        self.adjustStack = adjustStack
    }

    /// The stack, started on first use (scrypt at its production cost: logins are measured for real).
    func stack() throws -> Stack {
        if let ownStack { return ownStack }
        BenchScratch.removeLeftovers()
        let directory = BenchScratch.newDirectory(eventLoops: eventLoops)
        try? FileManager.default.removeItem(atPath: directory)
        temporaryDirectory = directory
        try beforeStart?(directory)
        var options = Stack.Options(binDirectory: Stack.siblingBinaryDirectory(), dataDirectory: directory)
        options.environment["LATCHKEY_MAX_CONNECTIONS"] = "20000"
        options.environment["LATCHKEY_EVENT_LOOPS"] = String(eventLoops)
        // The bench plays thousands of users from one address: lift the abuse limits it would trip.
        for limit in ["PER_NUMBER_10M", "PER_NUMBER_DAY", "PER_USER_10M", "PER_USER_DAY", "PER_CLIENT_10M", "PER_CLIENT_DAY", "GLOBAL_HOUR", "GLOBAL_DAY"] {
            options.environment["LATCHKEY_VERIFICATION_SENDS_\(limit)"] = "100000000"
        }
        options.serviceEnvironment["reset"] = ["LATCHKEY_RESET_CLIENT_PER_HOUR": "1000000"]
        options.serviceEnvironment["gateway"] = ["LATCHKEY_RATE_LIMITS": "auth=0:1,codes=0:1,reset=0:1,default=0:1"]
        adjustStack(&options)
        let stack = try Stack.start(options)
        ownStack = stack
        return stack
    }

    var gateway: Endpoint {
        get throws { try explicitGateway ?? stack().gateway }
    }

    /// A service's own address: only known when the bench started the stack.
    func direct(_ service: String) throws -> Endpoint {
        guard explicitGateway == nil else { throw ConfigurationError("direct targets need the bench's own stack (drop --address)") }
        return try stack().endpoint(service)
    }

    /// The processes whose CPU a run reports: `services` of the bench's own stack (none on a given
    /// gateway) and the load generator, this process.
    func watched(_ services: [String]) throws -> [CostPerOperation.Process] {
        let processes = explicitGateway == nil ? try services.map { (name: $0, pid: Optional(try stack().member($0).process.processIdentifier)) } : []
        return processes + [(name: "load generator", pid: nil)]
    }

    func shutdown() {
        ownStack?.stop()
        if let temporaryDirectory { try? FileManager.default.removeItem(atPath: temporaryDirectory) }
    }
}

/// Prints one row per measurement: a table, or JSON lines with `--json`.
final class BenchReport {
    private let asJSON: Bool
    private var printedHeader = false

    init(asJSON: Bool) { self.asJSON = asJSON }

    func row(_ name: String, _ result: LoadResult, ratioTo ceiling: (label: String, perSecond: Double)? = nil) {
        if asJSON {
            var fields: [String: JSON] = [
                "scenario": .string(name), "per_second": .double(result.perSecond.rounded()),
                "p50_us": .int(result.p50Microseconds), "p99_us": .int(result.p99Microseconds),
                "operations": .int(Int64(result.operations)), "errors": .int(Int64(result.errors)),
            ]
            if let ceiling {
                fields["ceiling"] = .string(ceiling.label)
                fields["ceiling_per_second"] = .double(ceiling.perSecond.rounded())
                fields["ratio"] = .double((result.perSecond / ceiling.perSecond * 1000).rounded() / 1000)
            }
            let costs = result.costPerOperation
            fields["cpu_us_per_operation"] = Self.byProcess(costs) { ($0.cpuMicroseconds * 100).rounded() / 100 }
            fields["context_switches_per_operation"] = Self.byProcess(costs) { $0.contextSwitches.map { ($0 * 100).rounded() / 100 } }
            fields["write_bytes_per_operation"] = Self.byProcess(costs) { $0.writes?.bytes.rounded() }
            fields["write_calls_per_operation"] = Self.byProcess(costs) { $0.writes.map { ($0.calls * 100).rounded() / 100 } }
            print(JSON.object(fields).text)
            return
        }
        if !printedHeader {
            print("scenario".padded(34) + "ops/s".leftPadded(10) + "p50".leftPadded(10) + "p99".leftPadded(10) + "errors".leftPadded(8) + "  vs ceiling")
            printedHeader = true
        }
        var line = name.padded(34) + result.perSecond.fixed(0).leftPadded(10)
        line += formatMicroseconds(result.p50Microseconds).leftPadded(10) + formatMicroseconds(result.p99Microseconds).leftPadded(10)
        line += String(result.errors).leftPadded(8)
        if let ceiling { line += "  \((result.perSecond / ceiling.perSecond).fixed(2)) of \(ceiling.label) (\(ceiling.perSecond.fixed(0))/s)" }
        print(line)
        if !result.costPerOperation.isEmpty {
            print("  CPU per operation: " + result.costPerOperation.map { "\($0.name) \($0.cpuMicroseconds.fixed(2)) us" }.joined(separator: ", "))
            let switches = result.costPerOperation.compactMap { cost in cost.contextSwitches.map { "\(cost.name) \($0.fixed(2))" } }
            if !switches.isEmpty { print("  context switches per operation: " + switches.joined(separator: ", ")) }
            // Only the processes that wrote: a ping row would otherwise print a line of zeros.
            let writes = result.costPerOperation.compactMap { cost -> String? in
                guard let writes = cost.writes, writes.bytes >= 50 || writes.calls >= 0.05 else { return nil }
                return "\(cost.name) \((writes.bytes / 1024).fixed(1)) KB in \(writes.calls.fixed(1)) calls"
            }
            if !writes.isEmpty { print("  written per operation (write calls; socket sends are not counted): " + writes.joined(separator: ", ")) }
        }
        if result.errors > 0, let sample = result.sampleError { print("  first error: \(sample)") }
        fflush(nil)
    }

    /// One figure per process that has it, by name; nil (the member left out) when none has.
    private static func byProcess(_ costs: [ProcessCost], _ figure: (ProcessCost) -> Double?) -> JSON? {
        let figures = costs.compactMap { cost in figure(cost).map { (cost.name, JSON.double($0)) } }
        return figures.isEmpty ? nil : .object(Dictionary(uniqueKeysWithValues: figures))
    }

    /// A ceiling measured in the same run; `before` and `after`, when it was measured on both
    /// sides of the row it is held to (then `perSecond` is their mean).
    /// What a row is held to: a limit it cannot pass (a peer, the disk), or the rate it is compared with.
    enum Reference: String {
        case ceiling, baseline
    }

    func ceiling(_ name: String, perSecond: Double, before: Double? = nil, after: Double? = nil, as role: Reference = .ceiling) {
        if asJSON {
            var fields: [String: JSON] = [role.rawValue: .string(name), "per_second": .double(perSecond.rounded())]
            if let before, let after {
                fields["before_per_second"] = .double(before.rounded())
                fields["after_per_second"] = .double(after.rounded())
            }
            print(JSON.object(fields).text)
        } else {
            let when = before.flatMap { before in after.map { "mean of \(before.fixed(0)) before and \($0.fixed(0)) after the next row" } }
            print(name.padded(34) + perSecond.fixed(0).leftPadded(10) + "   (\(role.rawValue), same machine, same run\(when.map { ": " + $0 } ?? ""))")
        }
        fflush(nil)
    }

    /// The `overload` scenario's figures: a block of lines, or one JSON line with `--json`.
    func overload(_ summary: OverloadTally.Summary) {
        let refusedFraction = summary.sent > 0 ? Double(summary.refused) / Double(summary.sent) : 0
        if asJSON {
            print(JSON.object([
                "scenario": "overload", "offered_per_second": .double(summary.offeredPerSecond.rounded()), "sent": .int(Int64(summary.sent)),
                "admitted": .int(Int64(summary.admitted)), "admitted_p50_us": .int(summary.admittedP50Microseconds),
                "admitted_p99_us": .int(summary.admittedP99Microseconds), "refused": .int(Int64(summary.refused)),
                "refused_fraction": .double((refusedFraction * 1000).rounded() / 1000), "refused_p99_us": .int(summary.refusedP99Microseconds),
                "timeouts": .int(Int64(summary.timeouts)), "login_handler_runs": .int(summary.handlerRuns), "expired_unrun": .int(summary.expired),
            ]).text)
        } else {
            print("overload: logins offered at \(summary.offeredPerSecond.fixed(0))/s straight to identity, \(summary.sent) sent")
            print("  admitted (answered by the handler) \(summary.admitted): p50 \(formatMicroseconds(summary.admittedP50Microseconds)), p99 \(formatMicroseconds(summary.admittedP99Microseconds)) (request timeout 10 s)")
            print("  refused overloaded/rate_limited \(summary.refused) (\((refusedFraction * 100).fixed(1))%): p99 \(formatMicroseconds(summary.refusedP99Microseconds))")
            print("  answered timeout \(summary.timeouts); other errors \(summary.otherErrors)")
            print("  login handler runs (one scrypt each) \(summary.handlerRuns) vs answered by the handler \(summary.admitted); expired in the queue, not run: \(summary.expired)")
        }
        fflush(nil)
    }

    private func formatMicroseconds(_ value: Int64) -> String {
        value >= 10_000 ? (Double(value) / 1000).fixed(1) + "ms" : "\(value)us"
    }
}

extension String {
    func padded(_ width: Int) -> String { count >= width ? self + " " : self + String(repeating: " ", count: width - count) }
    func leftPadded(_ width: Int) -> String { count >= width ? " " + self : String(repeating: " ", count: width - count) + self }
}
