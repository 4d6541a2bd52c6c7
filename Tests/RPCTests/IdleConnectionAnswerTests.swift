import Foundation
import LineProtocol
@testable import Platform
@testable import RPC
@testable import Runtime
import ServerTestSupport
import TestSupport
import XCTest

/// A connection idle for longer than the write timeout must not be taken for a
/// stalled reader when its next answer is queued in the same loop turn as the timeout check.
/// The answers are released by a loop timer that runs, in the same turn, just before the
/// server's own 100 ms connection tick, so on the old code every answer met the check.
final class IdleConnectionAnswerTests: XCTestCase {
    private let writeTimeoutMilliseconds: Int64 = 50
    /// Longer than the write timeout: the connection has written nothing for this long.
    private let idleMilliseconds: Int64 = 120

    private func lineLimits() -> ServerLimits {
        var limits = ServerLimits()
        limits.writeTimeoutMilliseconds = writeTimeoutMilliseconds
        return limits
    }

    func testLineDoorIdleConnectionsGetEveryAnswer() throws {
        let parking = AnswerParking(minimumAgeMilliseconds: idleMilliseconds)
        let limits = lineLimits()
        let harness = try ParkedServerHarness(parking: parking) { loop in
            let server = RPCServer(
                loop: loop, limits: limits, dispatcher: ParkingDispatcher(parking: parking), logger: Logger(service: "test", sink: LogSink()),
                replicaID: "test", trustsCallerMeta: true)
            return (try server.listen(on: Endpoint(host: "127.0.0.1", port: 0)), { done in server.drain(completion: done) })
        }
        defer { harness.stop() }
        let clients = try (0..<40).map { _ in try LineClient(harness.endpoint, timeoutMilliseconds: 5000) }
        var lost = 0
        // Two rounds: the second after an earlier exchange on the same connections.
        for round in 0..<2 {
            for (index, client) in clients.enumerated() {
                try client.send(RPCRequest(method: "t.park", params: ["n": .int(Int64(index))], id: .int(Int64(round))).encoded())
            }
            for client in clients {
                guard let line = try? client.readLine(), let answer = try? JSONParser.parse(line), answer["result"] != nil else {
                    lost += 1
                    continue
                }
            }
        }
        XCTAssertEqual(lost, 0, "answers lost to a connection idle past the write timeout")
        XCTAssertEqual(parking.releasedCount, 80)
    }

    func testServiceToServicePoolGetsEveryAnswerAfterIdling() throws {
        let parking = AnswerParking(minimumAgeMilliseconds: idleMilliseconds)
        let limits = lineLimits()
        let harness = try ParkedServerHarness(parking: parking) { loop in
            let server = RPCServer(
                loop: loop, limits: limits, dispatcher: ParkingDispatcher(parking: parking), logger: Logger(service: "test", sink: LogSink()),
                replicaID: "test", trustsCallerMeta: true)
            return (try server.listen(on: Endpoint(host: "127.0.0.1", port: 0)), { done in server.drain(completion: done) })
        }
        defer { harness.stop() }
        // The caller's pool runs on its own loop, as in another service.
        let caller = try LoopThread()
        defer { caller.shutdown() }
        let client = RPCClient(loop: caller.loop, service: "t", endpoints: [harness.endpoint], connectionsPerAddress: 2, logger: Logger(service: "test", sink: LogSink()))
        var failures: [String] = []
        for _ in 0..<3 {
            let outcomes = SharedList<Result<JSON, RPCError>>()
            for index in 0..<20 {
                client.call("t.park", params: ["n": .int(Int64(index))], timeoutMilliseconds: 5000) { outcome in outcomes.append(outcome.result) }
            }
            waitUntil("every pooled call is answered") { outcomes.count == 20 }
            for case .failure(let error) in outcomes.all { failures.append(error.reasonText ?? error.message) }
        }
        XCTAssertEqual(failures, [], "pooled calls lost to the service cutting its caller's idle connection")
    }
}

final class ParkingDispatcher: RPCDispatcher, @unchecked Sendable {
    let parking: AnswerParking
    init(parking: AnswerParking) { self.parking = parking }

    func dispatch(_ request: RPCRequest, context: CallContext, reply: @escaping @Sendable (Result<JSON, RPCError>) -> Void) {
        let value = request.params ?? .null
        parking.park { reply(.success(value)) }
    }
}
