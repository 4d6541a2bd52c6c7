import XCTest

final class PlaceholderTests: XCTestCase {
    func testTargetBuilds() { XCTAssertTrue(true) }
}
