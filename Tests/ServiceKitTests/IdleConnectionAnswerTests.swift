import Foundation
@testable import HTTP
import LineProtocol
@testable import Platform
@testable import RPC
@testable import Runtime
import XCTest

/// Issue 13.1: a connection idle for longer than the write timeout must not be taken for a
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
        let callerLoop = try EventLoop()
        let callerThread = Thread { callerLoop.run() }
        callerThread.start()
        defer { callerLoop.stop() }
        let client = RPCClient(loop: callerLoop, service: "t", endpoints: [harness.endpoint], connectionsPerAddress: 2, logger: Logger(service: "test", sink: LogSink()))
        var failures: [String] = []
        for _ in 0..<3 {
            let outcomes = ResultBox<[Result<JSON, RPCError>]>()
            let collected = OutcomeCollector(expected: 20) { outcomes.set($0) }
            for index in 0..<20 {
                client.call("t.park", params: ["n": .int(Int64(index))], timeoutMilliseconds: 5000) { outcome in collected.add(outcome.result) }
            }
            for case .failure(let error) in outcomes.wait() { failures.append(error.reason ?? error.message) }
        }
        XCTAssertEqual(failures, [], "pooled calls lost to the service cutting its caller's idle connection")
    }
}

/// Requests held until they are at least `minimumAgeMilliseconds` old, then answered from a loop timer.
final class AnswerParking: @unchecked Sendable {
    private let lock = NSLock()
    private var parked: [(since: Int64, answer: () -> Void)] = []
    private var released = 0
    let minimumAgeMilliseconds: Int64

    init(minimumAgeMilliseconds: Int64) { self.minimumAgeMilliseconds = minimumAgeMilliseconds }

    func park(_ answer: @escaping () -> Void) {
        lock.lock()
        parked.append((MonotonicClock.nowMilliseconds(), answer))
        lock.unlock()
    }

    /// Loop thread: answers every request old enough, inline (as a handler finishing on the loop would).
    func releaseDue() {
        let now = MonotonicClock.nowMilliseconds()
        lock.lock()
        let due = parked.filter { now - $0.since >= minimumAgeMilliseconds }
        parked.removeAll { now - $0.since >= minimumAgeMilliseconds }
        released += due.count
        lock.unlock()
        for entry in due { entry.answer() }
    }

    var releasedCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return released
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

final class ParkingHTTPHandler: HTTPHandler, @unchecked Sendable {
    let parking: AnswerParking
    init(parking: AnswerParking) { self.parking = parking }

    func handle(_ request: HTTPRequest, context: HTTPRequestContext, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        parking.park { respond(HTTPResponse(status: 200, body: Array("{}".utf8))) }
    }
}

/// Collects a fixed number of outcomes from any thread and hands them over once all arrived.
final class OutcomeCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var outcomes: [Result<JSON, RPCError>] = []
    private let expected: Int
    private let done: ([Result<JSON, RPCError>]) -> Void

    init(expected: Int, done: @escaping ([Result<JSON, RPCError>]) -> Void) {
        self.expected = expected
        self.done = done
    }

    func add(_ outcome: Result<JSON, RPCError>) {
        lock.lock()
        outcomes.append(outcome)
        let complete = outcomes.count == expected ? outcomes : nil
        lock.unlock()
        if let complete { done(complete) }
    }
}

/// A server on its own loop thread whose parked answers are released by a 100 ms timer that
/// starts in the same millisecond as the server's connection tick and runs just before it.
final class ParkedServerHarness: @unchecked Sendable {
    let loop: EventLoop
    let endpoint: Endpoint
    private let thread: Thread
    private let finished = DispatchSemaphore(value: 0)
    private let drain: Drain

    typealias Drain = @Sendable (@escaping () -> Void) -> Void

    init(parking: AnswerParking, start: @escaping @Sendable (EventLoop) throws -> (SocketAddress, Drain)) throws {
        let loop = try EventLoop()
        self.loop = loop
        let finished = self.finished
        thread = Thread {
            loop.run()
            finished.signal()
        }
        thread.start()
        let started = ResultBox<Result<(SocketAddress, Drain), Error>>()
        loop.execute {
            // Both timers must compute their first due time in one millisecond, so they stay in step.
            let millisecond = MonotonicClock.nowMilliseconds()
            while MonotonicClock.nowMilliseconds() == millisecond {}
            loop.scheduleRepeating(everyMilliseconds: 100) { parking.releaseDue() }
            started.set(Result { try start(loop) })
        }
        let (address, drain) = try started.wait().get()
        self.endpoint = Endpoint(host: "127.0.0.1", port: address.port)
        self.drain = drain
    }

    func stop() {
        let loop = self.loop
        let drain = self.drain
        loop.execute { drain { loop.stop() } }
        finished.wait()
    }
}
