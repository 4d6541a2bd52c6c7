@testable import RPC
import TestSupport
import XCTest

/// The call table against a `Dictionary` doing the same: keys issued in sequence and held for
/// random lengths (a slow call keeps an old key while new ones wrap past its slot), keys that all
/// share their low bits (the longest runs, removals shifting entries across the table's end),
/// and keys a peer made up.
final class CallTableTests: XCTestCase {
    private func assertSame(_ table: CallTable<Int>, _ model: [Int: Int], _ context: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(table.count, model.count, context, file: file, line: line)
        XCTAssertEqual(table.isEmpty, model.isEmpty, context, file: file, line: line)
        var seen: [Int: Int] = [:]
        for (key, value) in table {
            XCTAssertNil(seen.updateValue(value, forKey: key), "\(context): key \(key) iterated twice", file: file, line: line)
        }
        XCTAssertEqual(seen, model, context, file: file, line: line)
        for key in model.keys { XCTAssertEqual(table[key], model[key], "\(context): key \(key)", file: file, line: line) }
    }

    func testSequentialKeysHeldForRandomLengthsAgreeWithADictionary() {
        for seed in 1...20 as ClosedRange<UInt64> {
            var random = SeededGenerator(seed: seed)
            var table = CallTable<Int>()
            var model: [Int: Int] = [:]
            var nextKey = 0
            for step in 0..<3_000 {
                if model.isEmpty || Int.random(in: 0..<100, using: &random) < 52 {
                    nextKey += 1
                    table[nextKey] = step
                    model[nextKey] = step
                } else {
                    // Mostly the oldest calls end first; sometimes any one does.
                    let key = Int.random(in: 0..<4, using: &random) == 0 ? model.keys.randomElement(using: &random)! : model.keys.min()!
                    XCTAssertEqual(table.removeValue(forKey: key), model.removeValue(forKey: key), "seed \(seed) step \(step)")
                }
                if step % 97 == 0 { assertSame(table, model, "seed \(seed) step \(step)") }
            }
            assertSame(table, model, "seed \(seed) at the end")
        }
    }

    func testKeysSharingTheirLowBitsAgreeWithADictionary() {
        for seed in 1...20 as ClosedRange<UInt64> {
            var random = SeededGenerator(seed: seed)
            var table = CallTable<Int>()
            var model: [Int: Int] = [:]
            for step in 0..<400 {
                // Homes near the table's last slots, so runs wrap around to its first ones.
                let key = Int.random(in: 0..<24, using: &random) * 1_024 + 1_020 + Int.random(in: 0..<6, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0, 1:
                    table[key] = step
                    model[key] = step
                default:
                    XCTAssertEqual(table.removeValue(forKey: key), model.removeValue(forKey: key), "seed \(seed) step \(step)")
                }
                assertSame(table, model, "seed \(seed) step \(step)")
            }
        }
    }

    func testAKeyNoCallHoldsFindsNothing() {
        var table = CallTable<Int>()
        XCTAssertNil(table[1], "an empty table")
        for key in 1...10 { table[key] = key }
        for key in [0, -1, 11, 1 << 40, Int.min, Int.max] {
            XCTAssertNil(table[key], "key \(key)")
            XCTAssertNil(table.removeValue(forKey: key), "key \(key)")
        }
        XCTAssertEqual(table.count, 10)
    }

    func testAValueChangesInPlaceAndRemovingAllEmptiesTheTable() {
        var table = CallTable<Int>()
        table[7] = 1
        table[7] = 2
        XCTAssertEqual(table[7], 2)
        XCTAssertEqual(table.count, 1)
        table[7] = nil
        XCTAssertTrue(table.isEmpty)
        for key in 1...100 { table[key] = key }
        let kept = table
        table.removeAll()
        XCTAssertTrue(table.isEmpty)
        XCTAssertNil(table[50])
        XCTAssertEqual(kept[50], 50, "a copy taken before keeps its entries")
    }
}
