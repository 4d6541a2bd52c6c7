import Foundation
import LineProtocol
import Platform
import RPC
import StackLauncher
import TestSupport
import XCTest

/// The gateway started under a low `RLIMIT_NOFILE`. It caps its connections to what
/// the limit allows and says so once; when descriptors run out anyway, it refuses the waiting
/// client instead of spinning on a listener that stays readable, and serves again once one frees.
final class FileDescriptorLimitEndToEndTests: XCTestCase {
    private var directory: String!
    private var gateway: Process?
    private var clients: [LineClient] = []
    /// Connections this test opened to the gateway's line door: each can cost one failed accept.
    private var connectionsOpened = 0

    override func setUpWithError() throws { directory = try makeScratchDirectory("fd-limit") }

    override func tearDown() {
        clients = []
        if let gateway, gateway.isRunning {
            kill(gateway.processIdentifier, SIGTERM)
            gateway.waitUntilExit()
        }
        gateway = nil
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testConnectionsAreCappedToWhatTheDescriptorLimitAllows() throws {
        let endpoint = try startGateway(descriptorLimit: 128, inheritedDescriptors: 0)
        let warnings = log.split(separator: "\n").filter { $0.contains("connection limits exceed the file descriptor limit") }
        XCTAssertEqual(warnings.count, 1, log)
        // 128 descriptors, a quarter kept back: 96 connections.
        XCTAssertTrue(warnings.first?.contains(#""net.max_connections":96"#) ?? false, log)
        for _ in 0..<96 { clients.append(try servedClient(endpoint)) }
        let refused = try LineClient(endpoint, timeoutMilliseconds: 3000)
        XCTAssertTrue(try refused.readLine().map { String(decoding: $0, as: UTF8.self).contains("overloaded") } ?? false)
        XCTAssertNil(try refused.readLine(), "closed after the refusal")
        clients.removeLast(5)
        XCTAssertNoThrow(try waitUntilServed(endpoint), "a closed connection frees a place")
    }

    func testOutOfDescriptorsRefusesWithoutSpinningAndRecovers() throws {
        // Descriptors inherited from the wrapper shell use up what the budget counted on, so
        // `accept` itself fails with EMFILE well before the connection cap.
        let endpoint = try startGateway(descriptorLimit: 128, inheritedDescriptors: 70)
        var refusedCount = 0
        for _ in 0..<80 {
            guard let client = try? servedClient(endpoint) else {
                refusedCount += 1
                continue
            }
            clients.append(client)
        }
        XCTAssertGreaterThan(refusedCount, 0, "some clients met the descriptor limit")
        XCTAssertLessThan(clients.count, 96, "refused below the connection cap: accept itself failed")

        // With every descriptor taken, one more client waits in the backlog: it must be answered
        // or closed, and the gateway must not retry accept in a loop meanwhile. A connection costs
        // at most one failed accept (refused on the spare descriptor): a loop retrying it would
        // count thousands.
        connectionsOpened += 1
        let waiting = try LineClient(endpoint, timeoutMilliseconds: 3000)
        let answer = try waiting.readLine()
        XCTAssertTrue(answer.map { String(decoding: $0, as: UTF8.self).contains("overloaded") } ?? true, "an answer or a close, never a hang")

        clients.removeLast(10)
        _ = try waitUntilServed(endpoint)
        let metrics = try OperatorListener.metrics(try loggedMetricsEndpoint(in: log))
        let failedAccepts = metrics.events("net.accept_out_of_descriptors")
        XCTAssertGreaterThan(failedAccepts, 0, "counted in metrics")
        // The metrics request itself was one more connection (to the operator listener).
        XCTAssertLessThanOrEqual(failedAccepts, Int64(connectionsOpened + 1), "at most one failed accept per connection, none repeated")
        let warnings = log.split(separator: "\n").filter { $0.contains("out of file descriptors") }
        XCTAssertEqual(warnings.count, 1, "one rate-limited warning: \(warnings)")
    }

    // MARK: Helpers

    private var logPath: String { (directory as NSString).appendingPathComponent("gateway.log") }
    private var log: String { readTextFile(logPath) }

    /// The gateway under `ulimit -n`, with `inheritedDescriptors` open descriptors it did not open itself.
    private func startGateway(descriptorLimit: Int, inheritedDescriptors: Int) throws -> Endpoint {
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let script = """
            ulimit -n \(descriptorLimit) || exit 97
            for fd in $(seq 10 \(9 + inheritedDescriptors)); do eval "exec $fd</dev/null"; done
            exec "$@"
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [
            "-c", script, "wrapper", executablePath("gateway"),
            "--listen", "127.0.0.1:0", "--http-listen", "off", "--metrics-listen", "127.0.0.1:0",
            "--identity", "127.0.0.1:1", "--verification", "127.0.0.1:1", "--accounts", "127.0.0.1:1", "--reset", "127.0.0.1:1",
        ]
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        gateway = process
        let marker = "\"net.listen\":\""
        let deadline = MonotonicClock.nowMilliseconds() + 20_000
        while MonotonicClock.nowMilliseconds() < deadline {
            let text = log
            if let range = text.range(of: marker), let end = text[range.upperBound...].firstIndex(of: "\""),
                let endpoint = Endpoint(String(text[range.upperBound..<end]))
            {
                return endpoint
            }
            guard process.isRunning else { throw GatewayTestError("gateway exited: \(text)") }
            usleep(20_000)
        }
        throw GatewayTestError("gateway never listened")
    }

    /// A connection the gateway accepted and answers.
    private func servedClient(_ endpoint: Endpoint) throws -> LineClient {
        connectionsOpened += 1
        let client = try LineClient(endpoint, timeoutMilliseconds: 3000)
        guard try client.result("gateway.ping") == ["pong": true] else { throw GatewayTestError("no pong") }
        return client
    }

    private func waitUntilServed(_ endpoint: Endpoint, timeoutMilliseconds: Int64 = 5000) throws -> LineClient {
        let deadline = MonotonicClock.nowMilliseconds() + timeoutMilliseconds
        while MonotonicClock.nowMilliseconds() < deadline {
            if let client = try? servedClient(endpoint) { return client }
            usleep(50_000)
        }
        throw GatewayTestError("no new client was served")
    }
}
