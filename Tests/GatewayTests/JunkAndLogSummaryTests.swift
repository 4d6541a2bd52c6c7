import Foundation
@testable import Gateway
import LineProtocol
import Platform
import ServerTestSupport
import TestSupport
import XCTest


/// Junk spends the sender's tokens like any request, and what anyone can send
/// without limit (pings, refusals, rate-limited requests) is summarised, not logged line by line.
final class JunkAndLogSummaryTests: XCTestCase {
    private var gateway: GatewayUnderTest?

    override func tearDown() {
        gateway?.shutdown()
        gateway = nil
    }

    /// A gateway whose default bucket holds `burst` tokens refilled at 1 a second.
    private func start(defaultBurst: Double) throws -> GatewayUnderTest {
        var settings = GatewaySettings.unlimitedForTests
        settings.rateLimits[PolicyTable.Group.standard] = RateLimit(ratePerSecond: 1, burst: defaultBurst)
        let started = try GatewayUnderTest(endpoints: ["identity": [Endpoint(host: "127.0.0.1", port: 1)]], settings: settings)
        gateway = started
        return started
    }

    func testUnknownMethodsSpendTheCallersTokens() throws {
        let gateway = try start(defaultBurst: 5)
        let client = try gateway.client()
        for _ in 0..<5 { XCTAssertEqual(try client.call("nope.nope").error?.reason, .methodNotFound) }
        XCTAssertEqual(try client.call("nope.nope").error?.reason, .rateLimited)
        XCTAssertEqual(try client.call("accounts.balances", ["session": "lks_x"]).error?.reason, .rateLimited, "the same bucket")
    }

    func testMalformedLinesSpendTheCallersTokens() throws {
        let gateway = try start(defaultBurst: 3)
        let client = try gateway.client()
        for line in ["{nope", #"{"jsonrpc":"2.0","id":1}"#, "[]"] {
            XCTAssertTrue(client.send(raw: line + "\n"))
            let answer = try JSONParser.parse(Array((client.readLine() ?? "").utf8))
            XCTAssertNotEqual(answer["error"]?["data"]?["reason"], "rate_limited", line)
        }
        XCTAssertTrue(client.send(raw: "{nope\n"))
        let limited = try JSONParser.parse(Array((client.readLine() ?? "").utf8))
        XCTAssertEqual(limited["error"]?["data"]?["reason"], "rate_limited")
        XCTAssertNotNil(limited["error"]?["data"]?["retry_after"]?.intValue)
        XCTAssertEqual(try client.call("nope.nope").error?.reason, .rateLimited)
        XCTAssertEqual(gateway.gateway.metrics.counter("rpc.refused.parse_error"), 2)
        XCTAssertEqual(gateway.gateway.metrics.counter("rpc.refused.invalid_request"), 2)
    }

    func testPingsAndRefusalsAreSummarisedNotLoggedOneByOne() throws {
        let gateway = try start(defaultBurst: 2)
        let client = try gateway.client()
        for _ in 0..<10 { XCTAssertNotNil(try client.call("gateway.ping").result) }
        for _ in 0..<4 { _ = try client.call("nope.nope") }
        XCTAssertTrue(client.send(raw: "{nope\n"))
        XCTAssertNotNil(client.readLine())
        gateway.accessLog.flush(final: true)
        let lines = gateway.accessLines.text.split(separator: "\n")
        XCTAssertFalse(lines.contains { $0.contains(#""msg":"request""#) }, "no line per ping or refusal: \(lines)")
        let summaries = lines.filter { $0.contains(#""msg":"requests summarised""#) }
        XCTAssertEqual(summaries.count, 1, "\(lines)")
        let summary = try JSONParser.parse(Array((summaries.first ?? "").utf8))
        XCTAssertEqual(summary["summary.ping"], 10)
        XCTAssertEqual(summary["summary.method_not_found"], 2)
        XCTAssertEqual(summary["summary.rate_limited"], 3)
        XCTAssertEqual(summary["service"], "gateway")
        XCTAssertNotNil(summary["summary.interval_ms"]?.intValue)
        let metrics = gateway.gateway.metrics.snapshot()
        XCTAssertEqual(metrics["methods"]?["gateway.ping"]?["count"], 10)
        XCTAssertEqual(metrics["methods"]?["unknown"]?["errors"]?["rate_limited"], 2)
    }
}
