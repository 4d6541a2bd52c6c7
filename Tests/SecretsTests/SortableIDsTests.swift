import Foundation
import TestSupport
import XCTest

@testable import Secrets

final class SortableIDsTests: XCTestCase {
    func testIDsIssuedAtOnceFromManyThreadsAreDistinctAndEachThreadsSortInIssueOrder() {
        let ids = SortableIDs()
        let threads = 8, perThread = 500
        let issued = Locked<[[String]]>(Array(repeating: [], count: threads))
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            let mine = (0..<perThread).map { _ in ids.next(prefix: "tr_", randomBytes: 16) }
            issued.withLock { $0[thread] = mine }
        }
        for mine in issued.current {
            XCTAssertEqual(mine, mine.sorted(), "one thread's ids sort in the order it got them")
        }
        XCTAssertEqual(Set(issued.current.joined()).count, threads * perThread, "no id issued twice")
    }

    func testTheStampNeverGoesBackWhenTheClockDoes() {
        let ids = SortableIDs()
        let late = ids.stamp(nowMicroseconds: 2_000_000_000_000_000)
        let afterAStepBack = ids.stamp(nowMicroseconds: 1_000_000)
        XCTAssertLessThan(late, afterAStepBack)
        XCTAssertEqual([late.count, afterAStepBack.count], [14, 14])
        XCTAssertTrue(afterAStepBack.allSatisfy { "0123456789abcdef".contains($0) }, afterAStepBack)
    }

    func testAnIDIsThePrefixTheStampAndARandomTail() throws {
        let id = SortableIDs.shared.next(prefix: "dl_", randomBytes: 16)
        XCTAssertTrue(id.hasPrefix("dl_"), id)
        let tail = String(id.dropFirst(3 + 14))
        XCTAssertEqual(Base64URL.decode(tail)?.count, 16, id)
        XCTAssertNotEqual(SortableIDs.shared.next(prefix: "", randomBytes: 16).dropFirst(14), SortableIDs.shared.next(prefix: "", randomBytes: 16).dropFirst(14))
    }
}
