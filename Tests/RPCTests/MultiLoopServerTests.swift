import Foundation
import LineProtocol
@testable import Platform
@testable import RPC
@testable import Runtime
import TestSupport
import XCTest

/// One server over several event loops (`--event-loops N`): connections are spread over every
/// loop and stay on theirs, every request is answered exactly once and in order where the
/// protocol promises order, the connection limit holds for all loops together, and a drain
/// answers what is in flight on every loop before it completes.
final class MultiLoopServerTests: XCTestCase {
    func testConnectionsAreSpreadOverEveryLoopAndStayOnTheirs() throws {
        let harness = try MultiLoopHarness(loopCount: 3)
        defer { harness.stop() }
        let clients = try (0..<6).map { _ in try LineClient(harness.endpoint) }
        var loopsSeen: [Int64] = []
        for client in clients {
            let first = try client.result("t.loop").intValue
            for _ in 0..<5 { XCTAssertEqual(try client.result("t.loop").intValue, first, "a connection moved between loops") }
            loopsSeen.append(first ?? -1)
        }
        XCTAssertEqual(loopsSeen.sorted(), [0, 0, 1, 1, 2, 2], "six connections over three loops, two each (round-robin)")
    }

    /// Request ids are issued by each connection on its own loop, with no lock per request: ids
    /// from many connections over every loop at once are still all different.
    func testRequestIDsIssuedOnEveryLoopAtOnceAreAllDifferent() throws {
        let harness = try MultiLoopHarness(loopCount: 3)
        defer { harness.stop() }
        let ids = SharedList<String>()
        let failures = SharedList<String>()
        DispatchQueue.concurrentPerform(iterations: 9) { connection in
            do {
                let client = try LineClient(harness.endpoint)
                try client.sendRaw((0..<200).flatMap { RPCRequest(method: "t.id", params: nil, id: .int(Int64($0))).encoded() + [0x0A] })
                for _ in 0..<200 {
                    guard let line = try client.readLine(), let id = try JSONParser.parse(line)["result"]?.stringValue else {
                        throw TestFailure("no id answered")
                    }
                    ids.append(id)
                }
            } catch {
                failures.append("connection \(connection): \(error)")
            }
        }
        XCTAssertEqual(failures.all, [])
        XCTAssertEqual(ids.count, 1_800)
        XCTAssertEqual(Set(ids.all).count, 1_800, "an id was issued twice")
    }

    func testPipelinedBurstsOnManyConnectionsAreAnsweredOnceEachInOrder() throws {
        let harness = try MultiLoopHarness(loopCount: 4)
        defer { harness.stop() }
        let connections = 24
        let perConnection = 1500
        let failures = SharedList<String>()
        DispatchQueue.concurrentPerform(iterations: connections) { connection in
            do {
                let client = try LineClient(harness.endpoint)
                var burst: [UInt8] = []
                // Inline answers must come back in request order; pool answers exactly once each, in any order.
                for index in 0..<perConnection {
                    let method = index % 3 == 0 ? "t.pool" : "t.inline"
                    burst += RPCRequest(method: method, params: ["n": .int(Int64(index))], id: .int(Int64(index))).encoded() + [0x0A]
                }
                try client.sendRaw(burst)
                var seen = Set<Int64>()
                var lastInline: Int64 = -1
                for _ in 0..<perConnection {
                    guard let line = try client.readLine() else { throw TestFailure("connection \(connection) closed early") }
                    let answer = try JSONParser.parse(line)
                    guard let id = answer["id"]?.intValue, answer["result"]?["n"]?.intValue == id else {
                        throw TestFailure("answer without its own id: \(String(decoding: line, as: UTF8.self))")
                    }
                    guard seen.insert(id).inserted else { throw TestFailure("id \(id) answered twice") }
                    if id % 3 != 0 {
                        guard id > lastInline else { throw TestFailure("inline answer \(id) after \(lastInline)") }
                        lastInline = id
                    }
                }
                if seen.count != perConnection { throw TestFailure("\(seen.count) distinct answers of \(perConnection)") }
            } catch {
                failures.append("connection \(connection): \(error)")
            }
        }
        XCTAssertEqual(failures.all, [])
        XCTAssertEqual(harness.handlerRuns, Int64(connections * perConnection), "each request ran once")
    }

    func testConnectionLimitHoldsForEveryLoopTogether() throws {
        var limits = ServerLimits()
        limits.maxConnections = 5
        let harness = try MultiLoopHarness(loopCount: 3, limits: limits)
        defer { harness.stop() }
        let outcomes = Tally()
        // Every connection stays open until all have been answered, so none frees a place early.
        let answered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let attempts = 20
        for _ in 0..<attempts {
            Thread {
                let client = try? LineClient(harness.endpoint)
                let response = try? client?.call("t.inline", ["n": 1])
                // A refused connection reads `overloaded`, or a reset if its request crossed the close.
                outcomes.record(response.map { $0.outcome.failureReason ?? "served" } ?? "refused")
                answered.signal()
                release.wait()
                withExtendedLifetime(client) {}
            }.start()
        }
        for _ in 0..<attempts { XCTAssertEqual(answered.wait(timeout: .now() + 30), .success) }
        let counts = outcomes.counts
        XCTAssertEqual(counts["served"], 5, "\(counts)")
        XCTAssertEqual(counts.values.reduce(0, +) - (counts["served"] ?? 0), 15, "\(counts)")
        XCTAssertNil(counts.keys.first { !["served", "overloaded", "refused"].contains($0) }, "\(counts)")
        for _ in 0..<attempts { release.signal() }
    }

    func testDrainAnswersWhatIsInFlightOnEveryLoopBeforeItCompletes() throws {
        let harness = try MultiLoopHarness(loopCount: 3)
        defer { harness.stop() }
        let clients = try (0..<6).map { _ in try LineClient(harness.endpoint) }
        XCTAssertEqual(Set(try clients.map { try $0.result("t.loop").intValue ?? -1 }), [0, 1, 2])
        for (index, client) in clients.enumerated() {
            try client.send(RPCRequest(method: "t.gate", params: nil, id: .int(Int64(100 + index))).encoded())
        }
        XCTAssertTrue(harness.gate.waitUntilHeld(6, timeoutSeconds: 20), "every connection's request is running")
        let drained = DispatchSemaphore(value: 0)
        harness.drain { drained.signal() }
        XCTAssertEqual(drained.wait(timeout: .now()), .timedOut, "the drain cannot finish while requests are in flight")
        harness.gate.release()
        for (index, client) in clients.enumerated() {
            let line = try XCTUnwrap(try client.readLine(), "connection \(index) got its answer")
            XCTAssertEqual(try JSONParser.parse(line)["id"], .int(Int64(100 + index)))
            XCTAssertNil(try client.readLine(), "connection \(index) closed after its answer")
        }
        XCTAssertEqual(drained.wait(timeout: .now() + 20), .success, "the drain completes once every loop is empty")
    }
}

/// A server over `loopCount` loops, each on its own thread, with test methods:
/// `t.loop` (inline: which loop answered), `t.inline` / `t.pool` (echo `params`), `t.gate` (pool:
/// waits for the gate). `stop` drains and joins every loop.
private final class MultiLoopHarness: @unchecked Sendable {
    let group: EventLoopGroup
    let server: RPCServer
    let workers = WorkerPool(threadCount: 8, maxQueued: 100_000)
    let endpoint: Endpoint
    let gate = Blocker()
    private let runs = Counter()
    private let mainThread: JoinableThread
    private var stopped = false

    init(loopCount: Int, limits: ServerLimits = ServerLimits()) throws {
        group = try EventLoopGroup(count: loopCount)
        let router = Router(workers: workers, metrics: Metrics())
        let loops = group.loops
        let runs = self.runs
        let gate = self.gate
        router.register("t.loop", execution: .inline) { _, _ in
            .int(Int64(loops.firstIndex { $0 === EventLoop.current } ?? -1))
        }
        router.register("t.inline", execution: .inline) { params, _ in
            runs.add()
            return params["n"].map { ["n": $0] } ?? [:]
        }
        router.register("t.pool") { params, _ in
            runs.add()
            return params["n"].map { ["n": $0] } ?? [:]
        }
        router.register("t.id", execution: .inline) { _, context in .string(context.requestID) }
        router.register("t.gate") { _, _ in
            gate.hold()
            return true
        }
        var serverLimits = limits
        serverLimits.maxInflightPerConnection = 10_000
        server = RPCServer(
            group: group, limits: serverLimits, dispatcher: router, logger: Logger(service: "test", sink: LogSink()),
            replicaID: "test", trustsCallerMeta: true)
        let address = try server.listen(on: Endpoint(host: "127.0.0.1", port: 0))
        endpoint = Endpoint(host: "127.0.0.1", port: address.port)
        group.startSecondaryLoops()
        let main = group.main
        mainThread = JoinableThread(name: "test-main-loop") { main.run() }
    }

    var handlerRuns: Int64 { Int64(runs.value) }

    func drain(completion: @escaping @Sendable () -> Void) {
        let server = self.server
        group.main.execute { server.drain(completion: completion) }
    }

    func stop() {
        guard !stopped else { return }
        stopped = true
        gate.release()
        let finished = DispatchSemaphore(value: 0)
        drain { finished.signal() }
        _ = finished.wait(timeout: .now() + 30)
        group.main.stop()
        mainThread.join()
        group.stopSecondaryLoops()
        workers.shutdownAndJoin()
    }
}
