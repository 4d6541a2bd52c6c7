import Foundation
import LineProtocol
import Platform
import RPC
import TestSupport
import XCTest

/// Real executables with several event loops (`--event-loops`): bursts through the gateway on
/// many connections are answered exactly once each, and SIGTERM answers every request already
/// received on every loop before the process exits 0.
final class MultiLoopEndToEndTests: XCTestCase {
    private var directory: String!
    private var launched: [LaunchedProcess] = []

    override func setUpWithError() throws {
        directory = try makeScratchDirectory("multi-loop")
    }

    override func tearDown() {
        for process in launched { process.kill() }
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }

    func testBurstsThroughAThreeLoopGatewayAreAnsweredOnceEach() throws {
        let identity = try launch("identity", ["--event-loops", "2"])
        let address = identity.endpoint.description
        let gateway = try launch("gateway", [
            "--event-loops", "3", "--identity", address, "--verification", address, "--accounts", address, "--reset", address,
            "--rate-limits", "ping=0:1,default=0:1", "--http-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
        ])
        XCTAssertTrue(gateway.log.contains("\"net.event_loops\":3"), "the gateway runs three loops")
        let connections = 30
        let perConnection = 400
        let failures = SharedList<String>()
        let endpoint = gateway.endpoint
        DispatchQueue.concurrentPerform(iterations: connections) { connection in
            do {
                let client = try LineClient(endpoint)
                var burst: [UInt8] = []
                for index in 0..<perConnection {
                    let method = index % 2 == 0 ? "identity.ping" : "gateway.ping"
                    burst += RPCRequest(method: method, params: nil, id: .int(Int64(index))).encoded() + [0x0A]
                }
                try client.sendRaw(burst)
                var seen = Set<Int64>()
                for _ in 0..<perConnection {
                    guard let line = try client.readLine() else { throw GatewayTestError("closed after \(seen.count) answers") }
                    let answer = try JSONParser.parse(line)
                    guard answer["result"]?["pong"] == .bool(true), let id = answer["id"]?.intValue else {
                        throw GatewayTestError("not a pong: \(String(decoding: line, as: UTF8.self))")
                    }
                    guard seen.insert(id).inserted else { throw GatewayTestError("id \(id) answered twice") }
                }
            } catch {
                failures.append("connection \(connection): \(error)")
            }
        }
        XCTAssertEqual(failures.all, [])
        // Every loop records into the same figures by slot: each request is counted once, in both processes.
        let perMethod = Int64(connections * perConnection / 2)
        let gatewayMetrics = try OperatorListener.metrics(try gateway.metricsEndpoint)
        XCTAssertEqual(gatewayMetrics.requests("gateway.ping"), perMethod)
        XCTAssertEqual(gatewayMetrics.requests("identity.ping"), perMethod)
        let identityMethods = try LineClient(identity.endpoint).call("identity.metrics").result?["methods"]
        XCTAssertEqual(identityMethods?["identity.ping"]?["count"]?.intValue, perMethod)
    }

    func testSigtermAnswersEveryReceivedRequestOnEveryLoopThenExitsZero() throws {
        let identity = try launch("identity", ["--event-loops", "3", "--workers", "4", "--scrypt-log-n", "10", "--login-client-burst", "1000000"])
        let connections = 12
        let pipelined = 12
        let clients = try (0..<connections).map { _ in try LineClient(identity.endpoint, timeoutMilliseconds: 30_000) }
        for (connection, client) in clients.enumerated() {
            var burst: [UInt8] = []
            for index in 0..<pipelined {
                let params: JSON = ["username": .string("nobody\(connection)x\(index)"), "password": "not the password", "device_id": "d"]
                burst += RPCRequest(method: "identity.login", params: params, id: .int(Int64(index))).encoded() + [0x0A]
            }
            try client.sendRaw(burst)
        }
        // Mid-burst: the first answer is back, so the rest are queued or running on every loop.
        let first = try XCTUnwrap(try clients[0].readLine())
        Glibc.kill(identity.process.processIdentifier, SIGTERM)
        var answered = [Set<Int64>](repeating: [], count: connections)
        answered[0].insert(try JSONParser.parse(first)["id"]?.intValue ?? -1)
        for (connection, client) in clients.enumerated() {
            while let line = try client.readLine() {
                let id = try XCTUnwrap(try JSONParser.parse(line)["id"]?.intValue)
                XCTAssertTrue(answered[connection].insert(id).inserted, "connection \(connection): id \(id) answered twice")
            }
            XCTAssertEqual(answered[connection], Set(0..<Int64(pipelined)), "connection \(connection): every request answered before the close")
        }
        let deadline = Date().addingTimeInterval(30)
        while identity.process.isRunning && Date() < deadline { usleep(10_000) }
        XCTAssertFalse(identity.process.isRunning, "identity exits within 30 s of SIGTERM")
        guard !identity.process.isRunning else { return }
        identity.process.waitUntilExit()
        XCTAssertEqual(identity.process.terminationReason, .exit)
        XCTAssertEqual(identity.process.terminationStatus, 0)
    }

    private func launch(_ executable: String, _ arguments: [String]) throws -> LaunchedProcess {
        let process = try LaunchedProcess(executable, name: "\(executable)-\(launched.count)", arguments: arguments, directory: directory)
        launched.append(process)
        return process
    }
}
