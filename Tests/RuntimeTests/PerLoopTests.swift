import Foundation
import Runtime
import ServerTestSupport
import TestSupport
import XCTest

/// Per-request figures are split by event loop so that loops never share a lock or a cache
/// line per request; what must hold is that every update lands in exactly one part.
final class PerLoopTests: XCTestCase {
    private var threads: [LoopThread] = []
    private var loops: [EventLoop] { threads.map(\.loop) }

    override func setUpWithError() throws {
        threads = try (0..<3).map { _ in try LoopThread() }
    }

    override func tearDown() {
        for thread in threads { thread.shutdown() }
    }

    /// Runs `times` updates on each loop (on its thread) and waits for all of them.
    private func onEveryLoop(times: [Int], _ update: @escaping @Sendable () -> Void) {
        let done = DispatchGroup()
        for (loop, count) in zip(loops, times) {
            for _ in 0..<count {
                done.enter()
                loop.execute {
                    update()
                    done.leave()
                }
            }
        }
        done.wait()
    }

    func testALoopThreadKnowsItsLoopAndItsNumberAndNoOtherThreadDoes() {
        let seen = SharedList<String>()
        let loops = self.loops
        let done = DispatchGroup()
        for (index, loop) in loops.enumerated() {
            done.enter()
            loop.execute {
                let other = loops[(index + 1) % loops.count]
                seen.append("\(loop.isInLoopThread) \(other.isInLoopThread) \(EventLoop.currentNumber == loop.number)")
                done.leave()
            }
        }
        done.wait()
        XCTAssertEqual(seen.all, Array(repeating: "true false true", count: loops.count))
        XCTAssertEqual(loops.map(\.isInLoopThread), [false, false, false])
        XCTAssertNil(EventLoop.currentNumber)
    }

    func testEachLoopUpdatesAPartOfItsOwnAndOtherThreadsShareOne() {
        let counts = PerLoop(0)
        onEveryLoop(times: [100, 50, 20]) { counts.update { $0 += 1 } }
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<10 { counts.update { $0 += 1 } }
        }
        var parts: [Int] = []
        counts.visitAll { parts.append($0) }
        XCTAssertEqual(parts.filter { $0 > 0 }.sorted(), [20, 40, 50, 100], "one part per loop, one for the worker threads")
    }

    func testMetricsFromEveryLoopAndWorkerAtOnceAreEachCountedOnce() {
        let metrics = Metrics()
        let slot = metrics.slot(for: "t.m")
        let workers = Thread { DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<1_000 { metrics.record(slot, microseconds: 9, errorReason: "busy") }
        } }
        workers.start()
        onEveryLoop(times: [1_000, 1_000, 1_000]) { metrics.record(slot, microseconds: 5, errorReason: nil) }
        waitUntil("the workers' records are in") { metrics.snapshot()["methods"]?["t.m"]?["count"]?.intValue == 7_000 }
        let figures = metrics.snapshot()["methods"]?["t.m"]
        XCTAssertEqual(figures?["count"]?.intValue, 7_000)
        XCTAssertEqual(figures?["errors"]?["busy"]?.intValue, 4_000)
    }

    func testSlotsTakenAtOnceAreOnePerNameAndEachRecordsUnderItsOwnName() {
        let metrics = Metrics()
        let names = (0..<20).map { "t.m\($0)" }
        let taken = SharedList<(String, Metrics.Slot)>()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for name in names.shuffled() { taken.append((name, metrics.slot(for: name))) }
        }
        let slots = Dictionary(taken.all, uniquingKeysWith: { first, again in
            XCTAssertEqual(first, again, "one slot per name, whoever asks first")
            return first
        })
        XCTAssertEqual(Set(slots.values.map { "\($0)" }).count, names.count, "no two names share a slot")
        // Every loop records every method by its slot; a name taken later records after them.
        onEveryLoop(times: [1, 1, 1]) {
            for (index, name) in names.enumerated() {
                for _ in 0...index { metrics.record(slots[name]!, microseconds: 5, errorReason: nil) }
            }
        }
        metrics.record(metrics.slot(for: "t.late"), microseconds: 5, errorReason: "busy")
        let methods = metrics.snapshot()["methods"]
        for (index, name) in names.enumerated() {
            XCTAssertEqual(methods?[name]?["count"]?.intValue, Int64(3 * (index + 1)), name)
        }
        XCTAssertEqual(methods?["t.late"]?["errors"]?["busy"]?.intValue, 1)
        XCTAssertEqual(methods?.objectValue?.count, names.count + 1, "nothing recorded under a name it was not given")
    }

    func testLoopLocalGivesEachLoopItsOwnValueAndEveryOtherThreadOneMore() {
        final class Box: Sendable {}
        let local = LoopLocal { Box() }
        let seen = SharedList<ObjectIdentifier>()
        onEveryLoop(times: [2, 2, 2]) { seen.append(ObjectIdentifier(local.current)) }
        DispatchQueue.concurrentPerform(iterations: 4) { _ in seen.append(ObjectIdentifier(local.current)) }
        let counts = Dictionary(seen.all.map { ($0, 1) }, uniquingKeysWith: +)
        XCTAssertEqual(counts.values.sorted(), [2, 2, 2, 4], "one value per loop, asked twice each, and one for the other threads")
    }
}
