import Foundation
@testable import Gateway
import LineProtocol
import Platform
import RPC
import ServerTestSupport
import TestSupport
import XCTest


/// Connection caps and slow clients: each is cut off without hurting anyone else.
final class ProtectionTests: XCTestCase {
    private var gateway: GatewayUnderTest?

    override func tearDown() {
        gateway?.shutdown()
        gateway = nil
    }

    private func start(limits: ServerLimits) throws -> GatewayUnderTest {
        // No services needed: gateway.ping answers locally.
        let started = try GatewayUnderTest(endpoints: ["identity": [Endpoint(host: "127.0.0.1", port: 1)]], limits: limits)
        gateway = started
        return started
    }

    /// Worst round trip of `count` pings on a fresh connection, in milliseconds.
    /// Another client is served while a misbehaving one is still connected: each ping gets its
    /// answer (within the client's read timeout), which a loop blocked by the other could not give.
    private func assertOthersAnswered(_ gateway: GatewayUnderTest, count: Int = 20, file: StaticString = #filePath, line: UInt = #line) throws {
        let client = try gateway.client()
        for _ in 0..<count {
            XCTAssertEqual(try client.call("gateway.ping").result, ["pong": true], file: file, line: line)
        }
    }

    func testConnectionsPerAddressAreCapped() throws {
        var limits = ServerLimits()
        limits.maxConnectionsPerAddress = 3
        let gateway = try start(limits: limits)
        let first = try (0..<3).map { _ in try gateway.client() }
        for client in first { XCTAssertNotNil(try client.call("gateway.ping").result) }
        let refused = try gateway.client(timeoutMilliseconds: 2000)
        let line = refused.readLine()
        XCTAssertTrue(line?.contains("overloaded") ?? false, line ?? "closed without a word")
        XCTAssertTrue(refused.waitForClose())
        // Closing one frees a place.
        _ = first.first.map { Glibc.shutdown($0.fd, Int32(SHUT_RDWR)) }
        let server = gateway.server
        waitUntil("the gateway sees the connection close") { (try? gateway.loopThread.sync { server.connectionCount }) == 2 }
        XCTAssertNotNil(try gateway.client().call("gateway.ping").result)
    }

    func testTotalConnectionsAreCapped() throws {
        var limits = ServerLimits()
        limits.maxConnections = 2
        let gateway = try start(limits: limits)
        let held = try (0..<2).map { _ in try gateway.client() }
        for client in held { XCTAssertNotNil(try client.call("gateway.ping").result) }
        let refused = try gateway.client(timeoutMilliseconds: 2000)
        XCTAssertTrue(refused.readLine()?.contains("overloaded") ?? false)
    }

    func testSlowlorisIsCutOffAndOthersAreNotSlowed() throws {
        var limits = ServerLimits()
        limits.lineTimeoutMilliseconds = 500
        let gateway = try start(limits: limits)
        let slow = try gateway.client(timeoutMilliseconds: 3000)
        XCTAssertTrue(slow.send(raw: #"{"jsonrpc":"2.0","id":1,"#))
        // Keep dribbling a byte every 100 ms (the slow client is the attack under test, so its
        // pauses stay) for up to 5 s: activity does not extend a line's deadline, so the cut-off
        // comes while it still dribbles.
        let dribbled = Counter()
        let dribbler = JoinableThread(name: "dribbler") {
            for _ in 0..<50 {
                guard slow.send(raw: " ") else { return }
                dribbled.add()
                usleep(100_000)
            }
        }
        try assertOthersAnswered(gateway, count: 15)
        XCTAssertTrue(slow.waitForClose(), "the slow line was cut off")
        dribbler.join()
        XCTAssertLessThan(dribbled.value, 50, "cut off while still dribbling")
        try assertOthersAnswered(gateway)
    }

    func testClientThatNeverReadsIsCutOffAndOthersAreNotSlowed() throws {
        var limits = ServerLimits()
        limits.writeTimeoutMilliseconds = 500
        limits.outboundHighWaterBytes = 16 * 1024
        let gateway = try start(limits: limits)
        let greedy = try TestLineClient(port: gateway.port, receiveBufferBytes: 4096, timeoutMilliseconds: 200)
        // Batches of pings whose answers it never reads.
        let batch = "[" + (1...100).map { #"{"jsonrpc":"2.0","id":\#($0),"method":"gateway.ping"}"# }.joined(separator: ",") + "]\n"
        var sentLines = 0
        for _ in 0..<2000 {
            guard greedy.send(raw: batch) else { break }
            sentLines += 1
        }
        XCTAssertLessThan(sentLines, 2000, "the gateway stopped reading from a client that does not read")
        try assertOthersAnswered(gateway)
        let server = gateway.server
        waitUntil("the greedy client is cut off") { (try? gateway.loopThread.sync { server.connectionCount }) == 0 }
        XCTAssertTrue(greedy.waitForClose())
        try assertOthersAnswered(gateway)
    }

    func testOversizedLineGetsAnErrorAndTheConnectionKeepsWorking() throws {
        var limits = ServerLimits()
        limits.maxLineBytes = 1024
        let gateway = try start(limits: limits)
        let client = try gateway.client()
        XCTAssertTrue(client.send(raw: String(repeating: "x", count: 5000) + "\n"))
        XCTAssertTrue(client.readLine()?.contains("-32600") ?? false)
        XCTAssertNotNil(try client.call("gateway.ping").result)
    }
}
