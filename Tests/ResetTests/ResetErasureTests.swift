@testable import Reset
import TestSupport
import XCTest

/// A deleted user's part in reset: tokens and queued mails go; the per-address limits stay.
final class ResetErasureTests: ResetTestCase {
    func testTheUsersTokensAndQueuedMailsGoAndTheAddressLimitStays() throws {
        let now = clock.nowMilliseconds()
        _ = try store.issue(tokenHash: Array(repeating: 1, count: 32), userID: "usr_gone", nowMilliseconds: now, expiresAtMilliseconds: now + 60_000)
        _ = try store.issue(tokenHash: Array(repeating: 2, count: 32), userID: "usr_other", nowMilliseconds: now, expiresAtMilliseconds: now + 60_000)
        try service.request(email: "gone@example.com", context: context())
        let limitsBefore = try store.database.read { c in try c.query("SELECT subject FROM reset_requests", []).count }

        XCTAssertEqual(try store.eraseUser(userID: "usr_gone", email: "gone@example.com"), 2, "one token and the queued link mail")
        XCTAssertNil(try store.liveToken(hash: Array(repeating: 1, count: 32), nowMilliseconds: now))
        XCTAssertNotNil(try store.liveToken(hash: Array(repeating: 2, count: 32), nowMilliseconds: now))
        XCTAssertFalse(service.runNextJob(), "no mail is left to go to the address")
        XCTAssertEqual(try store.database.read { c in try c.query("SELECT subject FROM reset_requests", []).count }, limitsBefore)
        XCTAssertGreaterThan(limitsBefore, 0)
        XCTAssertEqual(try store.eraseUser(userID: "usr_gone", email: "gone@example.com"), 0, "erasing again changes nothing")
    }
}
