import Foundation
import LineProtocol
import Platform
import RPC
import StackLauncher
import TestSupport
import XCTest

/// The operator's first ten minutes with the real `latchkey` binary: `up` on a chosen base port,
/// honest readiness, a named port clash, this run's logs only, `--help` everywhere, and exit
/// statuses a script can tell apart.
final class LatchkeyToolTests: XCTestCase {
    private var directory: String!

    override func setUp() {
        directory = NSTemporaryDirectory() + "latchkey-tool-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testUpOnABasePortServesThereAndARestartShowsOnlyItsOwnRun() throws {
        let base = try freeBasePort()
        let data = directory + "/data"
        for run in 1...2 {
            let up = try ToolRun.start(
                ["up", "--demo", "--base-port", "\(base)", "--data-dir", data], directory: directory, label: "up\(run)",
                environment: ["LATCHKEY_DEMO_PASSWORD": "correct horse battery 9"])
            defer { up.interruptAndWait() }
            try up.waitForOutput("Press Ctrl-C", timeoutSeconds: 60)
            let output = up.output
            XCTAssertTrue(output.contains("http://127.0.0.1:\(base + 80)"), "the banner lists the HTTP door:\n\(output)")
            XCTAssertTrue(output.contains("http://127.0.0.1:\(base + 85)/metrics"), "the banner lists the metrics listener:\n\(output)")
            XCTAssertFalse(output.contains("demo user not created"), output)
            XCTAssertTrue(output.contains(run == 1 ? "demo user: username demo" : "demo user already exists"), output)
            if run == 1 { XCTAssertTrue(output.contains("e-mail demo@example.com"), "the reset flow needs the demo address:\n\(output)") }
            let ping = try ToolRun.start(["call", "gateway.ping", "--gateway", "127.0.0.1:\(base)"], directory: directory, label: "ping\(run)")
            XCTAssertEqual(ping.wait(), 0, ping.output)
            XCTAssertTrue(ping.output.contains("\"pong\":true"), ping.output)
            let scraped = try OperatorListener.metrics(Endpoint(host: "127.0.0.1", port: base + 85))
            XCTAssertGreaterThanOrEqual(scraped.requests("gateway.ping"), 1, "the ping is counted on the metrics listener")
            let answer = try LineClient(Endpoint(host: "127.0.0.1", port: base + 1)).call("identity.ping")
            XCTAssertNotNil(try? answer.outcome.get(), "identity listens on base + 1")
            // Each run starts five processes: exactly five `listening` lines, not the earlier run's too.
            try up.waitForOutput("\"msg\":\"listening\"", count: 5, timeoutSeconds: 10)
            XCTAssertEqual(up.output.components(separatedBy: "\"msg\":\"listening\"").count - 1, 5, "run \(run) replayed an earlier run's log lines")
            XCTAssertEqual(up.interruptAndWait(), 0)
        }
    }

    /// Production allows 3 codes per number per 10 minutes; a developer running the seed flow
    /// again and again on `latchkey up` must not be stopped by it.
    func testUpRelaxesTheSMSWindowsForDevelopment() throws {
        let base = try freeBasePort()
        let up = try ToolRun.start(
            ["up", "--demo", "--base-port", "\(base)", "--data-dir", directory + "/data"], directory: directory, label: "sms",
            environment: ["LATCHKEY_DEMO_PASSWORD": "correct horse battery 9"])
        defer { up.interruptAndWait() }
        try up.waitForOutput("Press Ctrl-C", timeoutSeconds: 60)
        let gateway = try LineClient(Endpoint(host: "127.0.0.1", port: base))
        let login = try gateway.call("identity.login", ["username": "demo", "password": "correct horse battery 9", "device_id": "dev-phone"]).outcome.get()
        let session = try XCTUnwrap(login["session"]?.stringValue)
        for attempt in 1...5 {
            let started = try gateway.call("verification.start", ["session": .string(session)])
            let requestID = try XCTUnwrap(try started.outcome.get()["request_id"]?.stringValue, "start \(attempt): \(started)")
            _ = try gateway.call("verification.cancel", ["session": .string(session), "request_id": .string(requestID)]).outcome.get()
        }
    }

    func testUpReplicasWithoutPostgresReplicateOnlyTheGatewayAndVerification() throws {
        let base = try freeBasePort()
        let up = try ToolRun.start(["up", "--replicas", "2", "--base-port", "\(base)", "--data-dir", directory + "/data"], directory: directory, label: "replicas")
        defer { up.interruptAndWait() }
        try up.waitForOutput("Press Ctrl-C", timeoutSeconds: 60)
        let output = up.output
        for replica in ["gateway-2", "verification-2"] { XCTAssertTrue(output.contains(replica), "\(replica) missing:\n\(output)") }
        for single in ["identity-2", "accounts-2", "reset-2"] { XCTAssertFalse(output.contains(single), output) }
        XCTAssertTrue(output.contains("add --postgres URL to replicate every service"), output)
        // The second gateway serves too, on base + 10.
        XCTAssertNotNil(try? LineClient(Endpoint(host: "127.0.0.1", port: base + 10)).call("gateway.ping").outcome.get())
    }

    /// `latchkey up --postgres URL --replicas 2`: every service twice over one database, the URL
    /// shown without its password, and the demo user's login and balances served by either gateway.
    func testUpOnPostgresReplicatesEveryServiceAndServesTheDemoUser() throws {
        let database = try PostgresTestDatabase()
        defer { database.drop() }
        let base = try freeBasePort()
        let up = try ToolRun.start(
            ["up", "--demo", "--postgres", database.url, "--replicas", "2", "--base-port", "\(base)", "--data-dir", directory + "/data"],
            directory: directory, label: "postgres", environment: ["LATCHKEY_DEMO_PASSWORD": "correct horse battery 9"])
        defer { up.interruptAndWait() }
        try up.waitForOutput("Press Ctrl-C", timeoutSeconds: 120)
        let output = up.output
        for replica in ["identity-2", "verification-2", "accounts-2", "reset-2", "gateway-2"] {
            XCTAssertTrue(output.contains(replica), "\(replica) missing:\n\(output)")
        }
        let password = URLComponents(string: database.url)?.password ?? "no password"
        XCTAssertFalse(output.contains(password), "the database password never reaches the output")
        XCTAssertTrue(output.contains("PostgreSQL at"), output)
        for gatewayPort in [base, base + 10] {
            let gateway = try LineClient(Endpoint(host: "127.0.0.1", port: gatewayPort))
            let login = try gateway.call("identity.login", ["username": "demo", "password": "correct horse battery 9", "device_id": .string("dev-\(gatewayPort)")]).outcome.get()
            XCTAssertNotNil(login["session"]?.stringValue, "gateway on \(gatewayPort)")
        }
        XCTAssertEqual(try database.sql("SELECT COUNT(*) FROM accounts.accounts WHERE name IN ('checking', 'saving')"), "2", "the demo user's accounts live in PostgreSQL")
        XCTAssertEqual(up.interruptAndWait(), 0)
    }

    /// After `up --base-port B`, one setting (`--base-port B` or `LATCHKEY_BASE_PORT=B`) finds the
    /// stack from every command that talks to it; an explicit address still wins.
    func testOneBasePortFindsAMovedStackFromEveryCommand() throws {
        let base = try freeBasePort()
        let data = directory + "/data"
        let password = "correct horse battery 9"
        let up = try ToolRun.start(
            ["up", "--demo", "--base-port", "\(base)", "--data-dir", data], directory: directory, label: "up",
            environment: ["LATCHKEY_DEMO_PASSWORD": password])
        defer { up.interruptAndWait() }
        try up.waitForOutput("Press Ctrl-C", timeoutSeconds: 60)
        XCTAssertTrue(up.output.contains("export LATCHKEY_BASE_PORT=\(base)"), "up says how to follow the move:\n\(up.output)")
        let moved = ["LATCHKEY_BASE_PORT": "\(base)"]
        let runs: [([String], [String: String])] = [
            (["call", "gateway.ping", "--base-port", "\(base)"], [:]), (["call", "gateway.ping"], moved),
            (["sessions", "demo", "--base-port", "\(base)"], [:]), (["activity", "demo"], moved),
            (["bench", "ping", "--target", "gateway", "--connections", "1", "--seconds", "1"], moved),
        ]
        for (arguments, environment) in runs {
            let run = try ToolRun.start(arguments, directory: directory, label: arguments[0], environment: environment)
            XCTAssertEqual(run.wait(), 0, "\(arguments) with \(environment): \(run.output)")
        }
        for arguments in [["call", "gateway.ping", "--gateway", "127.0.0.1:1"], ["sessions", "demo", "--identity", "127.0.0.1:1"]] {
            let run = try ToolRun.start(arguments, directory: directory, label: "explicit", environment: moved)
            XCTAssertEqual(run.wait(), 3, "the explicit address wins over the base port: \(run.output)")
        }
        try signInWithTheDemo(password: password, environment: moved, outbox: data + "/outbox.jsonl")
    }

    /// SignInDemo on the moved stack: its prompt reaches a script waiting for it (stdout is not a
    /// terminal), which then types the SMS code from the outbox.
    private func signInWithTheDemo(password: String, environment: [String: String], outbox: String) throws {
        let printedPath = directory + "/signin-demo.out"
        _ = FileManager.default.createFile(atPath: printedPath, contents: nil)
        let demo = Process()
        demo.executableURL = URL(fileURLWithPath: Stack.siblingBinaryDirectory() + "/SignInDemo")
        demo.arguments = ["--password", password, "--device-id", "base-port-demo"]
        demo.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let input = Pipe()
        let printed = try FileHandle(forWritingTo: URL(fileURLWithPath: printedPath))
        (demo.standardInput, demo.standardOutput, demo.standardError) = (input, printed, printed)
        try demo.run()
        try printed.close()
        defer { if demo.isRunning { demo.terminate() } }
        waitUntil("SignInDemo's prompt on its output", timeoutSeconds: 20) { readTextFile(printedPath).contains("type it:") }
        var text = ""
        waitUntil("the login SMS in the outbox") {
            let sms = readTextFile(outbox).split(separator: "\n").last { $0.contains("+15555550100") }.map(String.init) ?? ""
            text = (try? JSONParser.parse(Array(sms.utf8)))?["text"]?.stringValue ?? ""
            return !text.isEmpty
        }
        let code = try XCTUnwrap(text.range(of: #"\b\d{6,10}\b"#, options: .regularExpression).map { String(text[$0]) }, text)
        input.fileHandleForWriting.write(Data((code + "\n").utf8))
        try input.fileHandleForWriting.close()
        demo.waitUntilExit()
        let printedText = readTextFile(printedPath)
        XCTAssertEqual(demo.terminationStatus, 0, printedText)
        XCTAssertTrue(printedText.contains("checking: 5000.00 USD"), printedText)
    }

    func testUpNamesAPortInUseAndExitsNonZero() throws {
        let base = try freeBasePort()
        let squatter = try Socket.listen(on: try XCTUnwrap(SocketAddress.resolve(host: "127.0.0.1", port: base + 1).first))
        defer { squatter.close() }
        let up = try ToolRun.start(["up", "--base-port", "\(base)", "--data-dir", directory + "/data"], directory: directory, label: "clash")
        let status = up.wait()
        XCTAssertNotEqual(status, 0)
        XCTAssertTrue(up.output.contains("port \(base + 1) is in use: is another stack running?"), up.output)
        XCTAssertFalse(up.output.contains("Latchkey is up"), up.output)
    }

    /// A launcher that cannot stop its stack (kill -9, a closed terminal, a broken pipe) used to
    /// leave five orphans holding the ports, so the next `up` failed "port in use". Each child now
    /// reads end of file on the standard input the launcher held, and drains as on SIGTERM.
    func testKillingUpWithSIGKILLStopsEveryServiceItStarted() throws {
        let base = try freeBasePort()
        let data = directory + "/data"
        let up = try ToolRun.start(["up", "--base-port", "\(base)", "--data-dir", data], directory: directory, label: "kill9")
        defer { killListeners(onPorts: (0...4).map { base + $0 }) }
        try up.waitForOutput("Press Ctrl-C", timeoutSeconds: 60)
        kill(up.process.processIdentifier, SIGKILL)
        XCTAssertEqual(up.wait(), SIGKILL)
        for service in Stack.startOrder {
            let log = data + "/\(service).log"
            guard eventually(timeoutSeconds: 30, pollMilliseconds: 50, { Stack.readFile(log).contains("\"msg\":\"stopped\"") }) else {
                return XCTFail("\(service) did not stop after its launcher died:\n\(Stack.readFile(log))")
            }
            XCTAssertTrue(Stack.readFile(log).contains("\"msg\":\"launcher gone\""), Stack.readFile(log))
        }
        for port in (0...4).map({ base + $0 }) {
            XCTAssertNil(try? LineClient(Endpoint(host: "127.0.0.1", port: port), timeoutMilliseconds: 500), "port \(port) still listens")
        }
    }

    /// A bench killed before it cleans up leaves its data directory (a `long` run's is hundreds of
    /// megabytes). The next bench removes those whose process is gone and whose files are quiet,
    /// and keeps a live bench's, a recently written one, and anything not a bench's.
    func testABenchRemovesTheDataLeftByBenchesThatWereKilled() throws {
        let scratch = directory + "/tmp"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let ended = Process()
        ended.executableURL = URL(fileURLWithPath: "/bin/true")
        try ended.run()
        ended.waitUntilExit()
        let hourAgo = Date().addingTimeInterval(-3600)
        func leftover(_ name: String, modified: Date) throws -> String {
            let path = scratch + "/" + name
            try FileManager.default.createDirectory(atPath: path + "/verification-2", withIntermediateDirectories: true)
            for file in [path + "/identity.db", path + "/verification-2/verification.log"] {
                _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
                try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: file)
            }
            for folder in [path + "/verification-2", path] {
                try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: folder)
            }
            return path
        }
        let killed = try leftover("latchkey-bench-\(ended.processIdentifier)-2-1", modified: hourAgo)
        let stillWriting = try leftover("latchkey-bench-\(ended.processIdentifier)-2-2", modified: Date())
        let running = try leftover("latchkey-bench-\(getpid())-2-3", modified: hourAgo)
        let unrelated = try leftover("latchkey-other-\(ended.processIdentifier)", modified: hourAgo)
        let bench = try ToolRun.start(
            ["bench", "ping", "--target", "identity", "--connections", "1", "--seconds", "1"],
            directory: directory, label: "sweep", environment: ["TMPDIR": scratch + "/"])
        XCTAssertEqual(bench.wait(), 0, bench.output)
        XCTAssertFalse(FileManager.default.fileExists(atPath: killed), "a killed bench's data stays")
        for kept in [stillWriting, running, unrelated] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: kept + "/identity.db"), "\(kept) was removed")
        }
        let own = try FileManager.default.contentsOfDirectory(atPath: scratch).filter { $0.hasPrefix("latchkey-bench-\(bench.process.processIdentifier)-") }
        XCTAssertEqual(own, [], "the bench removes its own directory when it ends")
    }

    /// `bench ping` says what one answer cost each process of its own stack and the load generator,
    /// from their CPU over the run (the figure the shared machine's noise moves least), and how many
    /// context switches (the hand-offs between threads and processes an answer took).
    func testBenchPingReportsTheCPUAndContextSwitchesOfOneAnswerForEachProcess() throws {
        let bench = try ToolRun.start(
            ["bench", "ping", "--target", "identity", "--connections", "2", "--inflight", "2", "--seconds", "1", "--json", "true"],
            directory: directory, label: "bench")
        XCTAssertEqual(bench.wait(), 0, bench.output)
        #if DEBUG
        XCTAssertTrue(bench.output.contains("warning: this is a debug build"), "a debug build's figures are flagged:\n\(bench.output)")
        #else
        XCTAssertFalse(bench.output.contains("debug build"), bench.output)
        #endif
        let lines = bench.output.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
        let cpu = try XCTUnwrap(lines.lazy.compactMap { $0["cpu_us_per_operation"]?.objectValue }.first, bench.output)
        let switches = try XCTUnwrap(lines.lazy.compactMap { $0["context_switches_per_operation"]?.objectValue }.first, bench.output)
        for process in ["identity", "load generator"] {
            guard case .double(let microseconds)? = cpu[process] else { return XCTFail("no CPU figure for \(process):\n\(bench.output)") }
            XCTAssertGreaterThan(microseconds, 0, bench.output)
            // Two connections with two requests in flight: the loop sleeps between reads, so every answer costs some.
            let count: Double
            switch switches[process] {
            case .double(let number)?: count = number
            case .int(let number)?: count = Double(number)  // a whole number may read back as an integer
            default: return XCTFail("no switch count for \(process):\n\(bench.output)")
            }
            XCTAssertGreaterThan(count, 0, bench.output)
        }
    }

    /// `bench verify` says what one start + check wrote: each pair commits at least twice (the
    /// start, the check) with synchronous=FULL, and each commit puts at least one 4 KiB page in
    /// the WAL, so verification writes at least two pages per pair. What a build writes is the
    /// figure this shared host's speed does not move.
    func testBenchVerifyReportsWhatOnePairWroteForEachProcess() throws {
        let bench = try ToolRun.start(
            ["bench", "verify", "--connections", "1", "--seconds", "1", "--json", "true"], directory: directory, label: "bench-verify")
        XCTAssertEqual(bench.wait(), 0, bench.output)
        let lines = bench.output.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
        let row = try XCTUnwrap(lines.first { $0["scenario"]?.stringValue?.hasPrefix("verify start+check") == true }, bench.output)
        let bytes = try XCTUnwrap(row["write_bytes_per_operation"]?.objectValue, bench.output)
        let calls = try XCTUnwrap(row["write_calls_per_operation"]?.objectValue, bench.output)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(number(bytes["verification"]), bench.output), 2 * 4096, bench.output)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(number(calls["verification"]), bench.output), 2, bench.output)
        // The load generator writes no file (its requests are socket sends, which are not counted).
        XCTAssertLessThan(try XCTUnwrap(number(bytes["load generator"]), bench.output), 4096, bench.output)
    }

    /// `gateway.ping` is held to Redis measured right before and right after it, so a machine whose
    /// load drifts during the run moves the ceiling with the row instead of skewing the ratio.
    func testBenchPingHoldsGatewayPingToRedisMeasuredOnBothSidesOfIt() throws {
        guard ["redis-server", "redis-benchmark"].allSatisfy({ FileManager.default.isExecutableFile(atPath: "/usr/bin/" + $0) }) else {
            throw XCTSkip("needs redis-server and redis-benchmark (Debian redis-server, redis-tools; .ci/run installs them)")
        }
        let bench = try ToolRun.start(
            ["bench", "ping", "--target", "gateway", "--connections", "2", "--inflight", "2", "--seconds", "1", "--json", "true"],
            directory: directory, label: "bench-redis")
        XCTAssertEqual(bench.wait(), 0, bench.output)
        try assertHeldToBothSides(bench.output, reference: ("ceiling", "redis PING_INLINE"), row: "gateway.ping", label: "redis")
    }

    /// The hop is held to the direct rate measured right before and right after it, like
    /// `gateway.ping` to Redis.
    func testBenchPingHoldsTheHopToDirectMeasuredOnBothSidesOfIt() throws {
        let bench = try ToolRun.start(
            ["bench", "ping", "--connections", "2", "--inflight", "2", "--seconds", "1", "--json", "true"], directory: directory, label: "bench-hop")
        XCTAssertEqual(bench.wait(), 0, bench.output)
        try assertHeldToBothSides(bench.output, reference: ("baseline", "ping direct identity"), row: "ping via gateway", label: "direct")
    }

    /// Each transfer row is held to the bare commit rate probed right before and right after it:
    /// the disk's rate drifts on a shared machine, and one probe before both rows skewed the second.
    func testBenchTransferHoldsEachRowToTheCommitRateMeasuredOnBothSidesOfIt() throws {
        let bench = try ToolRun.start(
            ["bench", "transfer", "--connections", "1", "--seconds", "1", "--json", "true"], directory: directory, label: "bench-transfer")
        XCTAssertEqual(bench.wait(), 0, bench.output)
        for row in ["transfer confirmed by SMS code", "transfer confirmed by device key"] {
            try assertHeldToBothSides(bench.output, reference: ("ceiling", "sqlite commit"), row: row, label: "commit")
        }
        let probes = bench.output.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }.filter { $0["before_per_second"] != nil }
        XCTAssertEqual(probes.count, 2, bench.output)
        XCTAssertEqual(probes.first?["after_per_second"], probes.last?["before_per_second"], "the probe between the rows serves both")
    }

    /// A verify pair commits twice with synchronous=FULL, like a transfer: its row is held to the
    /// bare commit rate probed right before and right after it, not to `verification.ping`. Two
    /// connections wait for their codes at once, and each gets its own (the outbox reader wakes
    /// only the thread whose code arrived).
    func testBenchVerifyHoldsItsRowToTheCommitRateMeasuredOnBothSidesOfIt() throws {
        let bench = try ToolRun.start(
            ["bench", "verify", "--connections", "2", "--seconds", "1", "--json", "true"], directory: directory, label: "bench-verify-commit")
        XCTAssertEqual(bench.wait(), 0, bench.output)
        try assertHeldToBothSides(bench.output, reference: ("ceiling", "sqlite commit"), row: "verify start+check", label: "commit")
        let lines = bench.output.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
        let row = try XCTUnwrap(lines.first { $0["scenario"]?.stringValue?.hasPrefix("verify start+check") == true }, bench.output)
        XCTAssertGreaterThan(try XCTUnwrap(number(row["operations"]), bench.output), 0, bench.output)
        XCTAssertEqual(try XCTUnwrap(number(row["errors"]), bench.output), 0, bench.output)
    }

    /// In `--json` output: the row named `row…` is held, under `label`, to the mean of the rates
    /// before and after on the nearest reference line above it (`kind` named `name…`).
    private func assertHeldToBothSides(
        _ output: String, reference: (kind: String, name: String), row rowName: String, label: String, line: UInt = #line
    ) throws {
        let lines = output.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
        let rowIndex = try XCTUnwrap(lines.firstIndex { $0["scenario"]?.stringValue?.hasPrefix(rowName) == true }, output, line: line)
        let measured = try XCTUnwrap(
            lines[..<rowIndex].last { $0[reference.kind]?.stringValue?.hasPrefix(reference.name) == true }, output, line: line)
        let before = try XCTUnwrap(number(measured["before_per_second"]), output, line: line)
        let after = try XCTUnwrap(number(measured["after_per_second"]), output, line: line)
        XCTAssertGreaterThan(before, 0, line: line)
        XCTAssertGreaterThan(after, 0, line: line)
        let row = lines[rowIndex]
        let mean = try XCTUnwrap(number(row["ceiling_per_second"]), output, line: line)
        XCTAssertEqual(mean, (before + after) / 2, accuracy: 1, "held to the mean of the two", line: line)
        XCTAssertEqual(row["ceiling"], .string(label), line: line)
    }

    func testEveryCommandAndExecutableAnswersHelpWithExitZero() throws {
        for arguments in [["--help"], ["up", "--help"], ["call", "--help"], ["bench", "--help"], ["backup", "--help"], ["options", "--help"]] {
            let run = try ToolRun.start(arguments, directory: directory, label: "help")
            XCTAssertEqual(run.wait(), 0, "latchkey \(arguments.joined(separator: " ")): \(run.output)")
            XCTAssertTrue(run.output.contains("usage: latchkey"), run.output)
        }
        for executable in ["gateway", "identity", "verification", "accounts", "reset"] {
            let run = try ToolRun.start(["--help"], executable: executable, directory: directory, label: "help-\(executable)")
            XCTAssertEqual(run.wait(), 0, "\(executable) --help: \(run.output)")
            XCTAssertTrue(run.output.contains("usage: \(executable)"), run.output)
            XCTAssertTrue(run.output.contains("LATCHKEY_LISTEN"), run.output)
        }
    }

    func testCallTellsABadArgumentFromAStoppedStack() throws {
        let badJSON = try ToolRun.start(["call", "gateway.ping", "{not json"], directory: directory, label: "bad-json")
        XCTAssertEqual(badJSON.wait(), 2, badJSON.output)
        let port = try freeBasePort()
        let refused = try ToolRun.start(["call", "gateway.ping", "--gateway", "127.0.0.1:\(port)"], directory: directory, label: "refused")
        XCTAssertEqual(refused.wait(), 3, refused.output)
        XCTAssertTrue(refused.output.contains("is the stack running? try `latchkey up`"), refused.output)
    }

    /// A base port whose ports (P..P+4, their second replicas P+10..P+14, P+80 and P+90) are free right now.
    /// After a failed run: ends any process still listening on these ports (found by the
    /// `--listen 127.0.0.1:PORT` a stack gives each child), so no orphan outlives the test.
    private func killListeners(onPorts ports: [Int]) {
        let wanted = Set(ports.map { "127.0.0.1:\($0)" })
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), let command = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            let arguments = command.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            if let at = arguments.firstIndex(of: "--listen"), at + 1 < arguments.count, wanted.contains(arguments[at + 1]) {
                kill(pid, SIGKILL)
            }
        }
    }

    private func freeBasePort() throws -> Int {
        for _ in 0..<200 {
            // Below the kernel's ephemeral range (32768 and up), where outgoing connections of
            // other tests cannot take a port between this check and the stack's start; every
            // port a two-replica stack uses.
            let base = Int.random(in: 10_000...30_000)
            let ports = [0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 80, 85, 90, 95].map { base + $0 }
            var sockets: [Socket] = []
            defer { sockets.forEach { $0.close() } }
            for port in ports {
                guard let address = try SocketAddress.resolve(host: "127.0.0.1", port: port).first,
                      let socket = try? Socket.listen(on: address) else { break }
                sockets.append(socket)
            }
            if sockets.count == ports.count { return base }
        }
        throw XCTSkip("no free base port found")
    }
}

/// One run of a Latchkey executable with stdout and stderr captured in a file.
private final class ToolRun {
    let process = Process()
    let outputPath: String

    private init(outputPath: String) { self.outputPath = outputPath }

    static func start(
        _ arguments: [String], executable: String = "latchkey", directory: String, label: String, environment extra: [String: String] = [:]
    ) throws -> ToolRun {
        let run = ToolRun(outputPath: "\(directory)/\(label)-\(UUID().uuidString.prefix(6)).out")
        _ = FileManager.default.createFile(atPath: run.outputPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: run.outputPath))
        run.process.executableURL = URL(fileURLWithPath: executablePath(executable))
        run.process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["LATCHKEY_SCRYPT_LOG_N"] = "10"
        environment.merge(extra) { _, new in new }
        run.process.environment = environment
        run.process.standardOutput = output
        run.process.standardError = output
        run.process.standardInput = FileHandle.nullDevice
        try run.process.run()
        try output.close()
        return run
    }

    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// Waits until `marker` appears `count` times, the process ends, or the deadline passes.
    func waitForOutput(_ marker: String, count: Int = 1, timeoutSeconds: Double) throws {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while output.components(separatedBy: marker).count - 1 < count {
            guard process.isRunning else { throw ToolRunError("exited with \(process.terminationStatus) before \(marker):\n\(output)") }
            guard Date() < deadline else { throw ToolRunError("no \(marker) within \(timeoutSeconds) s:\n\(output)") }
            usleep(50_000)
        }
    }

    @discardableResult
    func wait() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }

    @discardableResult
    func interruptAndWait() -> Int32 {
        if process.isRunning { kill(process.processIdentifier, SIGINT) }
        return wait()
    }
}

private struct ToolRunError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A bench figure: a whole number may read back as an integer.
private func number(_ value: JSON?) -> Double? {
    switch value {
    case .int(let number)?: return Double(number)
    case .double(let number)?: return number
    default: return nil
    }
}
