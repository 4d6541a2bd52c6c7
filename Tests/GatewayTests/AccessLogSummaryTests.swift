import Dispatch
import LineProtocol
import TestSupport
import XCTest

@testable import Gateway

final class AccessLogSummaryTests: XCTestCase {
    /// Kinds numbered for the first time while summaries are being gathered (a route's slot taken
    /// on one thread while another writes the summary): every count reaches exactly one summary line.
    func testKindsFirstCountedWhileASummaryIsGatheredAreAllCountedOnce() throws {
        let written = Locked<[UInt8]>([])
        let log = AccessLog(replicaID: "gateway", summaryIntervalMilliseconds: 1) { bytes in written.withLock { $0 += bytes } }
        let kinds = 3000
        let counted = Locked(false)
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            if worker == 0 {
                for index in 0..<kinds { log.summarise(log.slot(forKind: "kind_\(index)")) }
                counted.withLock { $0 = true }
            } else {
                while !counted.current { log.flush(final: true) }
            }
        }
        log.flush(final: true)
        var totals: [String: Int64] = [:]
        for line in written.current.split(separator: UInt8(ascii: "\n")) {
            guard case .object(let members) = try JSONParser.parse(Array(line)) else { return XCTFail("a log line that is not an object") }
            for (name, value) in members where name.hasPrefix("summary.kind_") { totals[name, default: 0] += value.intValue ?? 0 }
        }
        XCTAssertEqual(totals.count, kinds, "every kind in some summary")
        XCTAssertEqual(totals.values.filter { $0 != 1 }.count, 0, "each counted once")
    }
}
