import Platform
import XCTest

/// The two pieces the method table and the column index share: FNV-1a against the published
/// 64-bit vectors (before `hash` folds the high bits down), and the table sizes.
final class TableHashTests: XCTestCase {
    func testFNV1aMatchesThePublishedVectors() {
        let vectors: [(String, UInt64)] = [("", 0xcbf2_9ce4_8422_2325), ("a", 0xaf63_dc4c_8601_ec8c), ("foobar", 0x8594_4171_f739_67e8)]
        for (text, published) in vectors {
            let folded = Int(truncatingIfNeeded: published ^ (published >> 29))
            var text = text
            XCTAssertEqual(text.withUTF8 { FNV1a.hash($0) }, folded, text)
        }
    }

    func testNextPowerOfTwoIsTheLeastAtLeastTheNumber() {
        XCTAssertEqual(0.nextPowerOfTwo, 1)
        for number in 1...4_100 {
            var power = 1
            while power < number { power *= 2 }
            XCTAssertEqual(number.nextPowerOfTwo, power, "\(number)")
        }
    }
}
