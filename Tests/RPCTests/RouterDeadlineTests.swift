import Foundation
import LineProtocol
@testable import Platform
@testable import RPC
@testable import Runtime
import TestSupport
import XCTest

/// The router over a worker pool: work whose deadline passed while it queued is answered, never run.
final class RouterDeadlineTests: XCTestCase {
    func testRouterAnswersTimeoutWithoutRunningTheHandlerForExpiredWork() {
        let pool = WorkerPool(threadCount: 1, maxQueued: 100)
        let metrics = Metrics()
        let router = Router(workers: pool, metrics: metrics)
        let blocker = Blocker()
        let runs = Counter()
        router.register("t.block") { _, _ in
            blocker.hold()
            return true
        }
        router.register("t.count") { _, _ in
            runs.add()
            return true
        }
        let replies = SharedList<Result<JSON, RPCError>>()
        let logger = Logger(service: "t", sink: LogSink())
        router.dispatch(RPCRequest(method: "t.block", params: nil, id: 0), context: CallContext(
            method: "t.block", requestID: "r0", client: nil, logger: logger, deadlineMilliseconds: .max)) { replies.append($0) }
        blocker.waitUntilHeld()
        let deadline = MonotonicClock.nowMilliseconds() + 100
        for index in 1...10 {
            let context = CallContext(method: "t.count", requestID: "r\(index)", client: nil, logger: logger, deadlineMilliseconds: deadline)
            router.dispatch(RPCRequest(method: "t.count", params: nil, id: .int(Int64(index))), context: context) { replies.append($0) }
        }
        waitUntil("the deadline passes while the work is queued") { MonotonicClock.nowMilliseconds() > deadline }
        blocker.release()
        waitUntil("every request is answered") { replies.count == 11 }
        XCTAssertEqual(runs.value, 0, "no handler ran for work nobody waits for")
        XCTAssertEqual(replies.all.filter { $0.failure?.reason == .timeout }.count, 10)
        XCTAssertEqual(metrics.counter("workers.expired"), 10)
        pool.shutdown()
        XCTAssertTrue(pool.awaitTermination(untilMilliseconds: MonotonicClock.nowMilliseconds() + 10_000))
    }
}
