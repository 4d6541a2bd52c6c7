import Foundation
import XCTest

@testable import Runtime

final class LogTimestampTests: XCTestCase {
    func testInstantsReadTheSameAsFoundationsISO8601() {
        let reference = ISO8601DateFormatter()
        reference.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        reference.timeZone = TimeZone(identifier: "UTC")
        var generator = SystemRandomNumberGenerator()
        // 1970, a leap day's last millisecond, today, and random instants up to the year 2200.
        var instants: [Int64] = [0, 1, 999, 1_000, 1_709_251_199_999, 1_764_549_313_304]
        for _ in 0..<500 { instants.append(Int64.random(in: 0...7_258_118_400_000, using: &generator)) }
        for milliseconds in instants {
            let expected = reference.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
            XCTAssertEqual(LogTimestamp.format(unixMilliseconds: milliseconds), expected, "at \(milliseconds) ms")
        }
    }

    func testAnInstantBefore1970KeepsItsFractionPositive() {
        XCTAssertEqual(LogTimestamp.format(unixMilliseconds: -1), "1969-12-31T23:59:59.999Z")
    }
}
