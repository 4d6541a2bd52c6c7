@testable import Runtime
import TestSupport
import XCTest

final class WorkerPoolAndHistogramTests: XCTestCase {
    func testFullQueueRefusesInsteadOfGrowing() {
        let pool = WorkerPool(threadCount: 1, maxQueued: 2)
        let blocker = Blocker()
        XCTAssertTrue(pool.submit { blocker.hold() })
        XCTAssertTrue(blocker.waitUntilHeld(), "the one worker is now blocked")
        XCTAssertTrue(pool.submit {})
        XCTAssertTrue(pool.submit {})
        XCTAssertFalse(pool.submit {}, "a third queued item exceeds maxQueued")
        blocker.release()
        pool.shutdownAndJoin()
    }

    func testHistogramPercentilesBracketTheTruth() {
        var histogram = LatencyHistogram()
        for value in 1...1000 { histogram.record(microseconds: Int64(value)) }
        let p50 = histogram.percentile(0.5)
        let p99 = histogram.percentile(0.99)
        XCTAssertTrue((500...600).contains(p50), "p50 \(p50)")
        XCTAssertTrue((990...1200).contains(p99), "p99 \(p99)")
        XCTAssertEqual(LatencyHistogram().percentile(0.5), 0)
    }
}
