import Foundation
import LineProtocol
@testable import Platform
@testable import RPC
@testable import Runtime
import ServerTestSupport
import TestSupport
import XCTest

/// A caller that stops waiting bounds the work it asked for: the gateway gives up on a login
/// after its upstream timeout, and identity must then never start the hash. The budget travels
/// as `meta.budget_ms` on every call between processes.
final class CallerBudgetTests: XCTestCase {
    func testQueuedCallsWhoseCallerHasGivenUpNeverRun() throws {
        let blocker = Blocker()
        let runs = Counter()
        let server = try RouterServer(workerThreads: 1) { router in
            router.register("t.block") { _, _ in
                blocker.hold()
                return true
            }
            router.register("t.count") { _, _ in
                runs.add()
                return true
            }
        }
        defer { server.stop() }
        let caller = try LoopThread()
        defer { caller.shutdown() }
        let client = RPCClient(
            loop: caller.loop, service: "t", endpoints: [server.endpoint], connectionsPerAddress: 1, logger: Logger(service: "test", sink: LogSink()))

        // The server's own timeout (10 s) would let these run after the blocker; the caller waits 200 ms.
        client.call("t.block", params: nil, timeoutMilliseconds: 60_000) { _ in }
        blocker.waitUntilHeld()
        let answered = SharedList<Result<JSON, RPCError>>()
        for _ in 0..<10 {
            client.call("t.count", params: nil, timeoutMilliseconds: 200) { answered.append($0.result) }
        }
        waitUntil("the caller gives up on all ten", timeoutSeconds: 20) { answered.count == 10 }
        blocker.release()
        // Once the worker is free, the queued calls meet their expired budget: answered, never run.
        let probe = SharedList<Result<JSON, RPCError>>()
        client.call("t.count", params: nil, timeoutMilliseconds: 60_000) { probe.append($0.result) }
        waitUntil("a call within its budget still runs", timeoutSeconds: 20) { probe.count == 1 }
        XCTAssertEqual(runs.value, 1, "only the call whose caller still waited ran")
    }
}
