import Foundation
import LineProtocol
@testable import Platform
@testable import RPC
@testable import Runtime
import XCTest

/// The server over real TCP on port 0, in-process.
final class RPCServerTests: XCTestCase {
    private func makeServer(limits: ServerLimits = ServerLimits()) throws -> TestServer {
        try TestServer(limits: limits) { router in
            router.register("t.echo") { params, _ in params["value"] ?? .null }
            router.register("t.slow") { params, _ in
                usleep(UInt32(try params.int("ms", range: 0...10_000)) * 1000)
                return "slow"
            }
        }
    }

    private func answer(_ client: LineClient) throws -> JSON {
        guard let line = try client.readLine() else { throw SystemError(call: "read", errno: ECONNRESET) }
        return try JSONParser.parse(line)
    }

    func testAnswersComeOutOfOrderMatchedById() throws {
        let server = try makeServer()
        defer { server.stop() }
        let client = try LineClient(server.endpoint)
        try client.send(Array(#"{"jsonrpc":"2.0","id":"slow","method":"t.slow","params":{"ms":300}}"#.utf8))
        try client.send(Array(#"{"jsonrpc":"2.0","id":"fast","method":"t.echo","params":{"value":1}}"#.utf8))
        XCTAssertEqual(try answer(client)["id"], "fast")
        XCTAssertEqual(try answer(client)["id"], "slow")
    }

    func testOversizeLineGetsAnErrorAndTheConnectionSurvives() throws {
        var limits = ServerLimits()
        limits.maxLineBytes = 1024
        let server = try makeServer(limits: limits)
        defer { server.stop() }
        let client = try LineClient(server.endpoint)
        try client.send(Array(repeating: UInt8(ascii: "x"), count: 5000))
        let error = try answer(client)
        XCTAssertEqual(error["error"]?["data"]?["reason"], "line_too_long")
        XCTAssertEqual(error["id"], .null)
        XCTAssertEqual(try client.result("t.echo", ["value": 7]), 7)
    }

    func testNotificationsGetNoAnswerAndBatchesAnswerTogether() throws {
        let server = try makeServer()
        defer { server.stop() }
        let client = try LineClient(server.endpoint)
        try client.send(Array(#"{"jsonrpc":"2.0","method":"t.echo","params":{"value":1}}"#.utf8))
        try client.send(Array(#"[{"jsonrpc":"2.0","id":1,"method":"t.echo","params":{"value":"a"}},{"jsonrpc":"2.0","method":"t.echo"},{"jsonrpc":"2.0","id":2,"method":"nope"}]"#.utf8))
        let batch = try answer(client)
        XCTAssertEqual(batch.arrayValue?.count, 2, "the notification gets no answer, in or out of the batch")
        let ids = Set(batch.arrayValue?.compactMap { $0["id"]?.intValue } ?? [])
        XCTAssertEqual(ids, [1, 2])
    }

    func testSlowHandlerAnswersTimeoutAndLateResultIsDropped() throws {
        var limits = ServerLimits()
        limits.requestTimeoutMilliseconds = 200
        let server = try makeServer(limits: limits)
        defer { server.stop() }
        let client = try LineClient(server.endpoint)
        let response = try client.call("t.slow", ["ms": 1000])
        guard case .failure(let error) = response.outcome else { return XCTFail("expected timeout") }
        XCTAssertEqual(error.reason, "timeout")
        // The late result must not arrive as a second answer to the next call.
        XCTAssertEqual(try client.result("t.echo", ["value": "after"]), "after")
    }

    func testInflightLimitPausesReadingButEveryRequestIsAnswered() throws {
        var limits = ServerLimits()
        limits.maxInflightPerConnection = 2
        let server = try makeServer(limits: limits)
        defer { server.stop() }
        let client = try LineClient(server.endpoint)
        for id in 0..<20 {
            try client.send(Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"t.slow","params":{"ms":10}}"#.utf8))
        }
        var seen = Set<Int64>()
        for _ in 0..<20 { seen.insert(try answer(client)["id"]?.intValue ?? -1) }
        XCTAssertEqual(seen, Set(0..<20))
    }

    func testClientThatNeverFinishesALineIsCutOff() throws {
        var limits = ServerLimits()
        limits.lineTimeoutMilliseconds = 300
        let server = try makeServer(limits: limits)
        defer { server.stop() }
        let slow = try LineClient(server.endpoint)
        try slow.sendRaw(Array(#"{"jsonrpc":"2.0","#.utf8))
        let started = Date()
        XCTAssertNil(try slow.readLine(), "the server closes the connection")
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        // Others are served meanwhile.
        XCTAssertEqual(try LineClient(server.endpoint).result("t.echo", ["value": 1]), 1)
    }

    func testEndOfInputStillGetsItsAnswers() throws {
        let server = try makeServer()
        defer { server.stop() }
        let client = try LineClient(server.endpoint)
        try client.send(Array(#"{"jsonrpc":"2.0","id":9,"method":"t.slow","params":{"ms":100}}"#.utf8))
        client.finishSending()
        XCTAssertEqual(try answer(client)["result"], "slow")
        XCTAssertNil(try client.readLine())
    }

    func testDrainFinishesInflightWorkThenCloses() throws {
        let server = try makeServer()
        let client = try LineClient(server.endpoint)
        try client.send(Array(#"{"jsonrpc":"2.0","id":1,"method":"t.slow","params":{"ms":300}}"#.utf8))
        usleep(50_000)
        let stopped = DispatchSemaphore(value: 0)
        Thread { server.stop(); stopped.signal() }.start()
        XCTAssertEqual(try answer(client)["result"], "slow")
        XCTAssertEqual(stopped.wait(timeout: .now() + 5), .success)
    }

    func testDrainAnswersLinesAlreadyReceivedButNotYetStarted() throws {
        var limits = ServerLimits()
        limits.maxInflightPerConnection = 1
        let server = try makeServer(limits: limits)
        let client = try LineClient(server.endpoint)
        let three = (1...3).map { #"{"jsonrpc":"2.0","id":\#($0),"method":"t.slow","params":{"ms":100}}"# }.joined(separator: "\n") + "\n"
        try client.sendRaw(Array(three.utf8))
        usleep(30_000)  // all three lines are in; one runs, two wait behind the in-flight limit
        let stopped = DispatchSemaphore(value: 0)
        Thread { server.stop(); stopped.signal() }.start()
        var answered = Set<Int64>()
        for _ in 0..<3 { answered.insert(try answer(client)["id"]?.intValue ?? -1) }
        XCTAssertEqual(answered, [1, 2, 3])
        XCTAssertEqual(stopped.wait(timeout: .now() + 5), .success)
    }

    func testTooManyConnectionsGetAnErrorLine() throws {
        var limits = ServerLimits()
        limits.maxConnections = 1
        let server = try makeServer(limits: limits)
        defer { server.stop() }
        let first = try LineClient(server.endpoint)
        XCTAssertEqual(try first.result("t.echo", ["value": 1]), 1)
        let second = try LineClient(server.endpoint)
        let refusal = try answer(second)
        XCTAssertEqual(refusal["error"]?["data"]?["reason"], "overloaded")
    }
}

final class RPCClientTests: XCTestCase {
    private func clientLoop() throws -> (EventLoop, Thread) {
        let loop = try EventLoop()
        let thread = Thread { loop.run() }
        thread.start()
        return (loop, thread)
    }

    func testCallsReachTheServerAndManyCallersShareConnections() throws {
        let server = try TestServer { $0.register("t.echo") { params, _ in params["value"] ?? .null } }
        defer { server.stop() }
        let (loop, _) = try clientLoop()
        defer { loop.stop() }
        let client = RPCClient(loop: loop, service: "t", endpoints: [server.endpoint], logger: Logger(service: "c", sink: LogSink()))
        let results = ResultList()
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            let value = try? client.callAndWait("t.echo", params: ["value": .int(Int64(index))], context: nil)
            results.append(value?.intValue ?? -1)
        }
        XCTAssertEqual(Set(results.values), Set((0..<200).map(Int64.init)))
    }

    func testNothingListeningFailsFastAsUnavailable() throws {
        let (loop, _) = try clientLoop()
        defer { loop.stop() }
        let client = RPCClient(loop: loop, service: "t", endpoints: [Endpoint(host: "127.0.0.1", port: 1)], logger: Logger(service: "c", sink: LogSink()))
        let started = Date()
        XCTAssertThrowsError(try client.callAndWait("t.echo", params: nil, context: nil)) { error in
            XCTAssertEqual((error as? RPCError)?.reason, "unavailable")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 1)
    }

    func testSlowServerGivesTimeoutInBoundedTime() throws {
        let server = try TestServer { $0.register("t.slow") { _, _ in usleep(2_000_000); return 1 } }
        defer { server.stop() }
        let (loop, _) = try clientLoop()
        defer { loop.stop() }
        let client = RPCClient(loop: loop, service: "t", endpoints: [server.endpoint], logger: Logger(service: "c", sink: LogSink()))
        XCTAssertThrowsError(try client.callAndWait("t.slow", params: nil, context: nil, timeoutMilliseconds: 200)) { error in
            XCTAssertEqual((error as? RPCError)?.reason, "timeout")
        }
    }
}

final class ResultList: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var values: [Int64] = []
    func append(_ value: Int64) {
        lock.lock()
        values.append(value)
        lock.unlock()
    }
}
