import Foundation
import LineProtocol
import Platform
import RPC
import TestSupport
import XCTest

/// One client sending junk as fast as it can must not fill the disk through the
/// gateway's log, and must not stop the gateway answering others.
final class AccessLogFloodEndToEndTests: XCTestCase {
    private var directory: String!
    private var gateway: LaunchedProcess?

    override func setUpWithError() throws { directory = try makeScratchDirectory("log-flood") }

    override func tearDown() {
        gateway?.stop()
        gateway = nil
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testTwoHundredThousandJunkRequestsGrowTheLogByLessThanFiveMegabytes() throws {
        let gateway = try LaunchedProcess("gateway", name: "gateway", arguments: [
            "--identity", "127.0.0.1:1", "--verification", "127.0.0.1:1", "--accounts", "127.0.0.1:1", "--reset", "127.0.0.1:1",
            "--http-listen", "off", "--metrics-listen", "127.0.0.1:0", "--log-summary-interval-ms", "200",
        ], directory: directory)
        self.gateway = gateway
        let sizeBefore = fileSize(atPath: gateway.logPath)

        let total = 200_000
        let junk = try LineClient(gateway.endpoint, timeoutMilliseconds: 30_000)
        let reasons = ReasonTally()
        // Answers are read on their own thread: the gateway stops reading a client that reads nothing.
        // Only this thread reads; only the test thread writes (LineClient keeps no state for sends).
        nonisolated(unsafe) let answers = junk
        let reader = Thread {
            for _ in 0..<total {
                guard let line = try? answers.readLine(), let answer = try? JSONParser.parse(line) else { break }
                reasons.add(answer["error"]?["data"]?["reason"]?.stringValue ?? answer["error"]?["code"]?.intValue.map(String.init) ?? "none")
            }
            reasons.finish()
        }
        reader.start()
        var batch: [UInt8] = []
        for index in 0..<total {
            // One line in a hundred is not even JSON: malformed lines count like any request.
            batch += index % 100 == 99 ? Array("{nope\n".utf8) : Array(#"{"jsonrpc":"2.0","id":\#(index),"method":"nope.nope"}"#.utf8) + [0x0A]
            if batch.count > 64 * 1024 {
                try junk.sendRaw(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        try junk.sendRaw(batch)

        let other = try LineClient(gateway.endpoint)
        XCTAssertEqual(try other.result("gateway.ping"), ["pong": true], "another client is still answered")
        XCTAssertEqual(try other.result("gateway.health"), ["status": "down"], "no service behind it has a replica up")
        XCTAssertEqual(try OperatorListener.health(try gateway.metricsEndpoint)["status"]?.stringValue, "degraded")

        let counts = try XCTUnwrap(reasons.waitForFinish(timeoutSeconds: 60), "every junk request was answered")
        XCTAssertEqual(counts.values.reduce(0, +), total, "\(counts)")
        XCTAssertGreaterThan(counts["rate_limited"] ?? 0, total * 9 / 10, "junk is rate limited like any request: \(counts)")
        // The summary line names what was counted instead of logged.
        let summary = try waitForLine(in: gateway, containing: #""summary.rate_limited""#)
        XCTAssertTrue(summary.contains(#""msg":"requests summarised""#), summary)
        let growth = fileSize(atPath: gateway.logPath) - sizeBefore
        XCTAssertLessThan(growth, 5 << 20, "the log grew by \(growth) bytes")
        let metrics = try OperatorListener.metrics(try gateway.metricsEndpoint)
        XCTAssertGreaterThan(metrics.requests("unknown"), 0, "junk is counted in metrics")
        XCTAssertGreaterThan(metrics.events("rpc.refused.parse_error"), 0, "malformed lines are counted in metrics")
    }

    private func waitForLine(in process: LaunchedProcess, containing needle: String, timeoutMilliseconds: Int64 = 5000) throws -> String {
        let deadline = MonotonicClock.nowMilliseconds() + timeoutMilliseconds
        while MonotonicClock.nowMilliseconds() < deadline {
            if let line = process.log.split(separator: "\n").first(where: { $0.contains(needle) }) { return String(line) }
            usleep(20_000)
        }
        throw GatewayTestError("no log line with \(needle)")
    }
}

/// Error reasons seen by a reader thread, handed over once it has finished.
final class ReasonTally: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    private let done = DispatchSemaphore(value: 0)

    func add(_ reason: String) {
        lock.lock()
        counts[reason, default: 0] += 1
        lock.unlock()
    }

    func finish() { done.signal() }

    func waitForFinish(timeoutSeconds: Int) -> [String: Int]? {
        guard done.wait(timeout: .now() + .seconds(timeoutSeconds)) == .success else { return nil }
        lock.lock()
        defer { lock.unlock() }
        return counts
    }
}
