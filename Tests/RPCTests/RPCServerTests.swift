import Foundation
import LineProtocol
@testable import Platform
@testable import RPC
@testable import Runtime
import ServerTestSupport
import TestSupport
import XCTest

/// The server over real TCP on port 0, in-process.
final class RPCServerTests: XCTestCase {
    /// `t.hold` runs until the test releases it; `held` counts the runs that ended.
    private let hold = Blocker()
    private let held = Counter()

    private func makeServer(limits: ServerLimits = ServerLimits()) throws -> RouterServer {
        let hold = self.hold
        let held = self.held
        return try RouterServer(limits: limits) { router in
            // Inline: answered even once the pool has learned that `t.hold` takes longer than a deadline.
            router.register("t.echo", execution: .inline) { params, _ in params["value"] ?? .null }
            // A handler whose work takes time (the thing these tests need), not synchronisation.
            router.register("t.slow") { params, _ in
                usleep(UInt32(try params.int("ms", range: 0...10_000)) * 1000)
                return "slow"
            }
            router.register("t.hold") { _, _ in
                hold.hold()
                held.add()
                return "held"
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
        try client.send(Array(#"{"jsonrpc":"2.0","id":"slow","method":"t.hold"}"#.utf8))
        XCTAssertTrue(hold.waitUntilHeld())
        try client.send(Array(#"{"jsonrpc":"2.0","id":"fast","method":"t.echo","params":{"value":1}}"#.utf8))
        XCTAssertEqual(try answer(client)["id"], "fast")
        hold.release()
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
        let response = try client.call("t.hold")
        guard case .failure(let error) = response.outcome else { return XCTFail("expected timeout") }
        XCTAssertEqual(error.reason, .timeout)
        hold.release()
        waitUntil("the late handler finishes") { held.value == 1 }
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
        // End of input (nil), not the client's own read timeout (which throws): the server closed it.
        XCTAssertNil(try slow.readLine(), "the server closes the connection")
        // Others are served meanwhile.
        XCTAssertEqual(try LineClient(server.endpoint).result("t.echo", ["value": 1]), 1)
    }

    /// The line timeout is for a line that never ends, not for a fast client whose every write
    /// happens to end inside a line: each line here completes at once, so the client is never cut
    /// off, however long it goes on (measured from when the unfinished line began).
    func testAStreamWhoseWritesEachEndMidLineIsNotCutOff() throws {
        var limits = ServerLimits()
        limits.lineTimeoutMilliseconds = 300
        let server = try makeServer(limits: limits)
        defer { server.stop() }
        let client = try LineClient(server.endpoint)
        func request(_ id: Int) -> [UInt8] { Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"t.echo","params":{"value":\#(id)}}"#.utf8) + [0x0A] }
        // Every write finishes the line the last one began and begins the next.
        var pending = request(0)
        let began = MonotonicClock.nowMilliseconds()
        var id = 0
        while MonotonicClock.nowMilliseconds() - began < 4 * limits.lineTimeoutMilliseconds {
            let next = request(id + 1)
            try client.sendRaw(pending + next.prefix(10))
            pending = Array(next.dropFirst(10))
            let line = try XCTUnwrap(try client.readLine(), "cut off after \(id) lines")
            XCTAssertEqual(try JSONParser.parse(line)["result"]?.intValue, Int64(id))
            id += 1
        }
        XCTAssertGreaterThan(id, 1)
    }

    /// A line left unfinished while the server holds the client back (here: its one request in
    /// flight is slow) is not the client's slowness: the clock starts when reading resumes.
    func testALineUnfinishedWhileTheServerIsSaturatedIsNotCutOff() throws {
        var limits = ServerLimits()
        limits.lineTimeoutMilliseconds = 300
        limits.maxInflightPerConnection = 1
        let server = try makeServer(limits: limits)
        defer { server.stop() }
        let client = try LineClient(server.endpoint)
        let second = Array(#"{"jsonrpc":"2.0","id":2,"method":"t.echo","params":{"value":2}}"#.utf8)
        try client.sendRaw(Array(#"{"jsonrpc":"2.0","id":1,"method":"t.slow","params":{"ms":1000}}"#.utf8) + [0x0A] + second.prefix(10))
        XCTAssertEqual(try answer(client)["result"], "slow", "answered, not cut off while it waited")
        try client.sendRaw(Array(second.dropFirst(10)) + [0x0A])
        XCTAssertEqual(try answer(client)["result"], 2)
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

    /// During a drain, lines waiting behind the in-flight limit are answered even when they are
    /// answered inline: the close waits until every line received is handled, not until the
    /// first moment nothing is pending (between one inline answer and the next line).
    func testDrainAnswersInlineLinesWaitingBehindTheInflightLimit() throws {
        var limits = ServerLimits()
        limits.maxInflightPerConnection = 1
        let server = try makeServer(limits: limits)
        let client = try LineClient(server.endpoint)
        let lines = [#"{"jsonrpc":"2.0","id":0,"method":"t.hold"}"#]
            + (1...5).map { #"{"jsonrpc":"2.0","id":\#($0),"method":"t.echo","params":{"value":\#($0)}}"# }
        // One small write: every line arrives in the read that starts the first, which then holds.
        try client.sendRaw(Array((lines.joined(separator: "\n") + "\n").utf8))
        XCTAssertTrue(hold.waitUntilHeld())
        let stopped = DispatchSemaphore(value: 0)
        Thread { server.stop(); stopped.signal() }.start()
        waitUntil("the server drains") { (try? server.loopThread.sync { [server] in server.server.state }) == .draining }
        hold.release()
        var answered: [Int64] = []
        while let line = try client.readLine() {
            answered.append(try JSONParser.parse(line)["id"]?.intValue ?? -1)
        }
        XCTAssertEqual(answered, Array(0...5))
        XCTAssertEqual(stopped.wait(timeout: .now() + 5), .success)
    }

    func testDrainFinishesInflightWorkThenCloses() throws {
        let server = try makeServer()
        let client = try LineClient(server.endpoint)
        try client.send(Array(#"{"jsonrpc":"2.0","id":1,"method":"t.hold"}"#.utf8))
        XCTAssertTrue(hold.waitUntilHeld())
        let stopped = DispatchSemaphore(value: 0)
        Thread { server.stop(); stopped.signal() }.start()
        waitUntil("the server drains") { (try? server.loopThread.sync { [server] in server.server.state }) == .draining }
        hold.release()
        XCTAssertEqual(try answer(client)["result"], "held")
        XCTAssertEqual(stopped.wait(timeout: .now() + 5), .success)
    }

    func testDrainAnswersLinesAlreadyReceivedButNotYetStarted() throws {
        var limits = ServerLimits()
        limits.maxInflightPerConnection = 1
        let server = try makeServer(limits: limits)
        let client = try LineClient(server.endpoint)
        let three = (1...3).map { #"{"jsonrpc":"2.0","id":\#($0),"method":"t.hold"}"# }.joined(separator: "\n") + "\n"
        // One small write: the three lines arrive in the read that starts the first, which then holds;
        // the other two wait behind the in-flight limit.
        try client.sendRaw(Array(three.utf8))
        XCTAssertTrue(hold.waitUntilHeld())
        let stopped = DispatchSemaphore(value: 0)
        Thread { server.stop(); stopped.signal() }.start()
        waitUntil("the server drains") { (try? server.loopThread.sync { [server] in server.server.state }) == .draining }
        for _ in 0..<3 { hold.release() }
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
    func testCallsReachTheServerAndManyCallersShareConnections() throws {
        let server = try RouterServer { $0.register("t.echo") { params, _ in params["value"] ?? .null } }
        defer { server.stop() }
        let caller = try LoopThread()
        defer { caller.shutdown() }
        let client = RPCClient(loop: caller.loop, service: "t", endpoints: [server.endpoint], logger: Logger(service: "c", sink: LogSink()))
        let results = SharedList<Int64>()
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            let value = try? client.callAndWait("t.echo", params: ["value": .int(Int64(index))], context: nil)
            results.append(value?.intValue ?? -1)
        }
        XCTAssertEqual(Set(results.all), Set((0..<200).map(Int64.init)))
    }

    func testNothingListeningFailsFastAsUnavailable() throws {
        let caller = try LoopThread()
        defer { caller.shutdown() }
        let client = RPCClient(loop: caller.loop, service: "t", endpoints: [Endpoint(host: "127.0.0.1", port: 1)], logger: Logger(service: "c", sink: LogSink()))
        // With a minute to wait, `unavailable` (not `timeout`) proves the call failed at once.
        XCTAssertThrowsError(try client.callAndWait("t.echo", params: nil, context: nil, timeoutMilliseconds: 60_000)) { error in
            XCTAssertEqual((error as? RPCError)?.reason, .unavailable)
        }
    }

    /// A client dropped while its connect is still under way: the connect's end, a turn later,
    /// ends the call as `unavailable` and reads nothing of the client that is gone (it used to
    /// read the dropped client and crash the process, in some runs).
    func testAClientDroppedWhileConnectingEndsItsCallsWithoutIt() throws {
        let caller = try LoopThread()
        defer { caller.shutdown() }
        let holder = Locked<RPCClient?>(
            RPCClient(loop: caller.loop, service: "t", endpoints: [Endpoint(host: "127.0.0.1", port: 1)], logger: Logger(service: "c", sink: LogSink())))
        let answered = SharedList<Result<JSON, RPCError>>()
        caller.loop.execute {
            holder.current?.call("t.echo", params: nil, timeoutMilliseconds: 60_000) { answered.append($0.result) }
            holder.withLock { $0 = nil }  // the last reference: the client goes now, on the loop
        }
        waitUntil("the call ends", timeoutSeconds: 20) { answered.count == 1 }
        XCTAssertEqual(answered.all.first?.failure?.reason, .unavailable)
    }

    /// A client let go closes its connections (each once its calls are answered): they used to
    /// stay open, held by their channels, until the server closed them.
    func testAClientLetGoClosesItsConnections() throws {
        let server = try RouterServer { $0.register("t.echo") { params, _ in params["value"] ?? .null } }
        defer { server.stop() }
        let caller = try LoopThread()
        defer { caller.shutdown() }
        let holder = Locked<RPCClient?>(
            RPCClient(loop: caller.loop, service: "t", endpoints: [server.endpoint], logger: Logger(service: "c", sink: LogSink())))
        XCTAssertEqual(try holder.current?.callAndWait("t.echo", params: ["value": 1], context: nil), 1)
        XCTAssertGreaterThan(server.server.connectionCount, 0)
        holder.withLock { $0 = nil }
        XCTAssertTrue(waitUntil("the server sees the connection close") { server.server.connectionCount == 0 })
    }

    func testSlowServerGivesTimeoutInBoundedTime() throws {
        let blocker = Blocker()
        let server = try RouterServer { $0.register("t.slow") { _, _ in blocker.hold(); return 1 } }
        defer {
            blocker.release()
            server.stop()
        }
        let caller = try LoopThread()
        defer { caller.shutdown() }
        let client = RPCClient(loop: caller.loop, service: "t", endpoints: [server.endpoint], logger: Logger(service: "c", sink: LogSink()))
        XCTAssertThrowsError(try client.callAndWait("t.slow", params: nil, context: nil, timeoutMilliseconds: 200)) { error in
            XCTAssertEqual((error as? RPCError)?.reason, .timeout)
        }
    }
}
