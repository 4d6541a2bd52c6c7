import Foundation
@testable import HTTP
@testable import Platform
@testable import Runtime
import ServerTestSupport
import TestSupport
import XCTest

/// A keep-alive connection idle for longer than the write timeout must not be taken for a
/// stalled reader when its next answer is queued in the same loop turn as the timeout check.
/// The answers are released by a loop timer that runs, in the same turn, just before the
/// server's own 100 ms connection tick, so on the old code every answer met the check.
final class IdleKeepAliveResponseTests: XCTestCase {
    private let writeTimeoutMilliseconds: Int64 = 50
    /// Longer than the write timeout: the connection has written nothing for this long.
    private let idleMilliseconds: Int64 = 120

    func testHTTPDoorIdleKeepAliveConnectionsGetEveryResponse() throws {
        let parking = AnswerParking(minimumAgeMilliseconds: idleMilliseconds)
        var httpLimits = HTTPLimits()
        httpLimits.writeTimeoutMilliseconds = writeTimeoutMilliseconds
        let limits = httpLimits
        let harness = try ParkedServerHarness(parking: parking) { loop in
            let server = HTTPServer(
                loop: loop, limits: limits, handler: ParkingHTTPHandler(parking: parking), logger: Logger(service: "test", sink: LogSink()),
                replicaID: "test")
            return (try server.listen(on: Endpoint(host: "127.0.0.1", port: 0)), { done in server.drain(completion: done) })
        }
        defer { harness.stop() }
        let clients = try (0..<40).map { _ in try RawHTTPClient(harness.endpoint) }
        var lost = 0
        for _ in 0..<2 {
            for client in clients { try client.send(RawHTTPClient.get("/park")) }
            for client in clients where (try? client.readResponse())??.status != 200 { lost += 1 }
        }
        XCTAssertEqual(lost, 0, "responses lost on keep-alive connections idle past the write timeout")
        XCTAssertEqual(parking.releasedCount, 80)
    }
}

final class ParkingHTTPHandler: HTTPHandler, @unchecked Sendable {
    let parking: AnswerParking
    init(parking: AnswerParking) { self.parking = parking }

    func handle(_ request: HTTPRequest, context: HTTPRequestContext, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        parking.park { respond(HTTPResponse(status: 200, body: Array("{}".utf8))) }
    }
}
