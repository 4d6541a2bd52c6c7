import Runtime
import XCTest

@testable import ServiceKit

/// A follower polling while identity is down writes one warning per outage, not one per pass.
final class FailureLogTests: XCTestCase {
    func testAnOutageIsLoggedWhenItBeginsAndWhenItEnds() {
        let sink = LogSink()
        let log = FailureLog("erasure pass", logger: Logger(service: "accounts", sink: sink))
        log.succeeded()
        for _ in 0..<40 { log.failed("identity unreachable") }
        XCTAssertEqual(sink.capturedText.components(separatedBy: "background pass failing").count - 1, 1)
        log.succeeded()
        log.succeeded()
        XCTAssertEqual(sink.capturedText.components(separatedBy: "background pass works again").count - 1, 1)
        log.failed("identity unreachable")
        XCTAssertEqual(sink.capturedText.components(separatedBy: "background pass failing").count - 1, 2, "a second outage is news again")
    }
}
