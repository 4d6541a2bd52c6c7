import Contract
import Foundation
import LineProtocol
import Platform
import RPC
import Runtime
import ServerTestSupport
import TestSupport
import XCTest

/// A handler that calls another service waits for the answer without holding a worker thread:
/// a service's pool is sized for its own work, not for how slow the next service is.
final class AwaitingHandlerTests: XCTestCase {
    private static let slow = MethodContract(
        "down.slow", .internal, retry: .safe, summary: "Answers when the test lets it.", result: [Member("ok", .boolean)])
    private static let requests = 8

    private var downstreamHeld: Blocker!
    private var downstream: RouterServer!
    private var hop: LoopThread!
    private var toDownstream: RPCClient!
    private var caller: LoopThread!

    override func setUpWithError() throws {
        let held = Blocker()
        downstreamHeld = held
        downstream = try RouterServer(service: "down", workerThreads: Self.requests) { router in
            router.register(Self.slow) { _, _ in
                held.hold()
                return ["ok": true]
            }
        }
        hop = try LoopThread()
        toDownstream = RPCClient(loop: hop.loop, service: "down", endpoints: [downstream.endpoint], logger: Self.quiet)
        caller = try LoopThread()
    }

    override func tearDown() {
        downstreamHeld.release()
        downstream.stop()
        toDownstream = nil
        hop.shutdown()
        caller.shutdown()
    }

    /// One worker thread, eight requests relayed to a downstream that answers none until all
    /// eight have arrived: they all arrive, with the thread free, and all are answered.
    func testOneWorkerRelaysManyCallsToASlowDownstreamAtOnce() throws {
        let client = try XCTUnwrap(toDownstream)
        let upstream = try RouterServer(service: "up", workerThreads: 1) { router in
            router.register("up.relay") { _, context in try await client.call(Self.slow, params: [:], context: context) }
        }
        defer { upstream.stop() }
        let answers = relay(Self.requests, to: upstream)
        XCTAssertTrue(downstreamHeld.waitUntilHeld(Self.requests), "every relayed call reached the downstream while the others waited")
        waitUntil("the upstream's only worker is free while all wait") { upstream.workers.busyCount == 0 }
        downstreamHeld.release()
        waitUntil("every request is answered") { answers.count == Self.requests }
        XCTAssertEqual(answers.all.filter { (try? $0.get()) == ["ok": true] }.count, Self.requests)
    }

    /// The contrast that makes the test above mean something: a relay that blocks its thread
    /// while it waits leaves the other seven in the queue, one call at a time downstream.
    func testARelayThatBlocksHoldsItsThreadForTheWholeWait() throws {
        let client = try XCTUnwrap(toDownstream)
        let upstream = try RouterServer(service: "up", workerThreads: 1) { router in
            router.register("up.relay") { _, context in try client.callAndWait(Self.slow, params: [:], context: context) }
        }
        defer { upstream.stop() }
        let answers = relay(Self.requests, to: upstream)
        XCTAssertTrue(downstreamHeld.waitUntilHeld(1))
        waitUntil("the other seven wait in the queue behind the held thread") {
            upstream.workers.busyCount == 1 && upstream.workers.queuedCount == Self.requests - 1
        }
        downstreamHeld.release()
        waitUntil("every request is answered") { answers.count == Self.requests }
    }

    private func relay(_ count: Int, to upstream: RouterServer) -> SharedList<Result<JSON, RPCError>> {
        let client = RPCClient(loop: caller.loop, service: "up", endpoints: [upstream.endpoint], logger: Self.quiet)
        let answers = SharedList<Result<JSON, RPCError>>()
        for _ in 0..<count {
            client.call("up.relay", params: .object([:]), timeoutMilliseconds: 60_000) { answers.append($0.result) }
        }
        return answers
    }

    private static let quiet = Logger(service: "test", sink: LogSink())
}
