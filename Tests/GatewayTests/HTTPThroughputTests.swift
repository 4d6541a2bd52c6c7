import Foundation
@testable import Gateway
@testable import HTTP
import LineProtocol
@testable import Platform
@testable import RPC
@testable import Runtime
import ServerTestSupport
import TestSupport
import XCTest

/// `gateway.ping` through the same dispatcher behind both doors, in one run: one keep-alive
/// connection, one request at a time, then 16 pipelined. Counts the answers; the rates it prints
/// are for reading only (speed is `latchkey bench`'s to judge, not a test's).
final class HTTPThroughputTests: XCTestCase {
    func testPingRequestsPerSecondOverHTTPAndOverTheLineProtocol() throws {
        let http = try TestHTTPServer()
        defer { http.stop() }
        let lineDoor = try LoopThread()
        let rpcServer = RPCServer(
            loop: lineDoor.loop, limits: ServerLimits(), dispatcher: http.dispatcher, logger: Logger(service: "test", sink: LogSink()),
            replicaID: "test", trustsCallerMeta: false)
        let address = try lineDoor.sync { try rpcServer.listen(on: Endpoint(host: "127.0.0.1", port: 0)) }
        defer {
            lineDoor.await { done in rpcServer.drain(completion: done) }
            lineDoor.shutdown()
        }
        let rounds = 200
        let httpClient = try RawHTTPClient(http.endpoint)
        let request = RawHTTPClient.post("/v1/gateway/ping", "{}")
        let httpRate = try rate(rounds) { try httpClient.exchange(request).json?["result"] == ["pong": true] ? 1 : 0 }
        let pipelined = String(repeating: request, count: 16)
        let httpPipelinedRate = try rate(rounds, perRound: 16) {
            try httpClient.send(pipelined)
            return try (0..<16).filter { _ in try httpClient.readResponse()?.json?["result"] == ["pong": true] }.count
        }
        let lineClient = try LineClient(Endpoint(host: "127.0.0.1", port: address.port))
        let lineRate = try rate(rounds) { try lineClient.result("gateway.ping") == ["pong": true] ? 1 : 0 }
        let line = Array(#"{"jsonrpc":"2.0","id":1,"method":"gateway.ping"}"#.utf8) + [10]
        let linePipelined = Array([[UInt8]](repeating: line, count: 16).joined())
        let linePipelinedRate = try rate(rounds, perRound: 16) {
            try lineClient.sendRaw(linePipelined)
            return try (0..<16).filter { _ in try lineClient.readLine().map { try JSONParser.parse($0)["result"] } == ["pong": true] }.count
        }
        print("gateway.ping requests/s, one connection: HTTP \(Int(httpRate)), line \(Int(lineRate)); 16 pipelined: HTTP \(Int(httpPipelinedRate)), line \(Int(linePipelinedRate))")
    }

    /// Runs `body` `rounds` times, asserts every ping got its pong (`body` returns how many of its
    /// `perRound` pings did), and returns pongs per second.
    private func rate(_ rounds: Int, perRound: Int = 1, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Int) throws -> Double {
        let started = MonotonicClock.nowMicroseconds()
        var pongs = 0
        for _ in 0..<rounds { pongs += try body() }
        XCTAssertEqual(pongs, rounds * perRound, "every ping was answered with a pong", file: file, line: line)
        return Double(pongs) / max(1e-6, Double(MonotonicClock.nowMicroseconds() - started) / 1_000_000)
    }
}
