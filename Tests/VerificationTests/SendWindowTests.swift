import TestSupport
import XCTest

@testable import Verification

/// The send limits keep their meaning now that they look up one numbered send instead of
/// counting: every start is decided, retry_after included, as `COUNT(*) ... WHERE at > now - window`
/// over every send so far decides it (the model below), at and around the window edges.
class SendWindowTests: VerificationTestCase {
    private static let numberLimits = [SendLimit(count: 3, windowSeconds: 600), SendLimit(count: 5, windowSeconds: 3600)]
    private static let globalLimits = [SendLimit(count: 7, windowSeconds: 3600), SendLimit(count: 1, windowSeconds: 2)]

    func testLimitsDecideAsCountingEverySendWouldAtTheWindowEdges() throws {
        let harness = try makeHarness {
            $0.perNumber = Self.numberLimits
            $0.global = Self.globalLimits
        }
        var model = CountingModel()
        var random = SeededGenerator(seed: 19)
        var refusals = 0
        var admitted = 0
        for step in 0..<400 {
            harness.clock.advance(milliseconds: model.nextStep(after: harness.clock.nowMilliseconds(), &random))
            let now = harness.clock.nowMilliseconds()
            let number = ["+15555550111", "+15555550122"][Int(random.next() % 2)]
            let keys = [("number:" + number, Self.numberLimits, "number"), ("global", Self.globalLimits, "global")]
            let expected = model.refusal(keys: keys, nowMilliseconds: now)
            do {
                let id = try harness.start(number: number)
                XCTAssertNil(expected, "step \(step) at \(now): started, but counting refuses \(String(describing: expected))")
                _ = try harness.service.cancel(requestID: id, owner: nil, logger: harness.logger)
                model.record(keys: keys.map(\.0), at: now)
                admitted += 1
            } catch let error as VerificationError {
                XCTAssertEqual(error, expected, "step \(step) at \(now)")
                refusals += 1
            }
        }
        // The walk must have met both outcomes often, or it proved little.
        XCTAssertGreaterThan(admitted, 50)
        XCTAssertGreaterThan(refusals, 50)
    }

    /// Sends recorded before the numbering still count under the keys that are kept (`global`);
    /// a number's own window, once kept under the number in clear, starts again under its
    /// keyed hash, and no number stays in the table.
    func testSendsRecordedBeforeTheMigrationsStillCountUnderTheKeysKept() throws {
        let before = try databases.open(
            "verification", sqlite: Array(VerificationSchema.sqlite.prefix(3)), postgres: Array(VerificationSchema.postgres.prefix(3)))
        let start = ManualClock().nowMilliseconds()
        try before.write { c in
            // Two sends 200 s and 100 s ago, inserted out of time order.
            for (key, at) in [("global", start - 100_000), ("number:+15555550100", start - 200_000), ("global", start - 200_000)] {
                try c.run("INSERT INTO sends (key, at) VALUES (?, ?)", [.text(key), .integer(at)])
            }
        }
        let harness = try makeHarness { $0.global = [SendLimit(count: 2, windowSeconds: 600)] }
        XCTAssertEqual(try harness.database.schemaVersion(), VerificationSchema.sqlite.count)
        XCTAssertEqual(try harness.database.read { c in try c.query("SELECT key FROM send_log WHERE key LIKE 'number:%'", []).count }, 0)
        XCTAssertVerificationError(.rateLimited(retryAfterSeconds: 400, scope: "global"), try harness.start())
        harness.clock.advance(seconds: 400)
        _ = try harness.start()
    }

    func testPruneForgetsOnlySendsOutsideEveryWindow() throws {
        let harness = try makeHarness {
            $0.perNumber = [SendLimit(count: 2, windowSeconds: 86_400)]
            $0.retentionSeconds = 86_400
        }
        _ = try harness.service.cancel(requestID: try harness.start(), owner: nil, logger: harness.logger)
        harness.clock.advance(seconds: 43_200)
        _ = try harness.service.cancel(requestID: try harness.start(), owner: nil, logger: harness.logger)
        harness.clock.advance(seconds: 43_200)
        harness.service.prune(logger: harness.logger)
        // The first send is a day old (out of the window, pruned); the second still counts.
        _ = try harness.service.cancel(requestID: try harness.start(), owner: nil, logger: harness.logger)
        XCTAssertVerificationError(.rateLimited(retryAfterSeconds: 43_200, scope: "number"), try harness.start())
    }
}

/// The limits as the old `COUNT(*)` read them: every send's time, per key.
private struct CountingModel {
    private var sends: [String: [Int64]] = [:]
    private var history: [Int64] = []

    mutating func record(keys: [String], at: Int64) {
        for key in keys { sends[key, default: []].append(at) }
        history.append(at)
    }

    func refusal(keys: [(String, [SendLimit], String)], nowMilliseconds now: Int64) -> VerificationError? {
        var worst: (Int64, String)?
        for (key, limits, scope) in keys {
            for limit in limits {
                let inWindow = (sends[key] ?? []).filter { $0 > now - limit.windowSeconds * 1000 }.sorted()
                guard inWindow.count >= limit.count else { continue }
                let freeing = inWindow[inWindow.count - limit.count]
                let retryAfter = max(1, (freeing + limit.windowSeconds * 1000 - now + 999) / 1000)
                if worst == nil || retryAfter > worst!.0 { worst = (retryAfter, scope) }
            }
        }
        return worst.map { .rateLimited(retryAfterSeconds: $0.0, scope: $0.1) }
    }

    /// How far to move the clock: often to a past send's window edge exactly, a millisecond
    /// before or after it, or a short random step.
    func nextStep(after now: Int64, _ random: inout SeededGenerator) -> Int64 {
        let windows: [Int64] = [2_000, 600_000, 3_600_000]
        if let sent = history.last(where: { _ in random.next() % 3 == 0 }) ?? history.last, random.next() % 2 == 0 {
            let edge = sent + windows[Int(random.next() % 3)] + Int64(random.next() % 3) - 1
            if edge >= now { return edge - now }
        }
        return Int64(random.next() % 120_000)
    }
}
