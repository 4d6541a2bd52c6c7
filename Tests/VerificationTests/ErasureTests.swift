import Foundation
import ServiceKit
import Storage
import TestSupport
import XCTest

@testable import Verification

/// A deleted user's part in verification: the requests that name the user go, with their events
/// and queued sends; the number's limits stay, under a keyed hash that names nobody.
class ErasureTests: VerificationTestCase {
    private func rows(_ harness: Harness, _ sql: String) throws -> [String] {
        try harness.database.read { c in try c.query(sql, []).map { row in try row.string("v") } }
    }

    private func start(_ harness: Harness, _ number: String, for user: String) throws -> String {
        try harness.start(number: number) {
            $0.userID = user
            $0.provenNumber = number
        }
    }

    func testTheUsersRequestsGoAndTheNumbersLimitStaysWithoutTheNumber() throws {
        let harness = try makeHarness { $0.perNumber = [SendLimit(count: 2, windowSeconds: 3600)] }
        let mine = try start(harness, "+15555550100", for: "usr_gone")
        let stranger = try start(harness, "+15555550177", for: "usr_other")
        harness.sendDue()
        XCTAssertEqual(try rows(harness, "SELECT key AS v FROM send_log WHERE key LIKE '%555%'"), [], "no number in clear in the limits")

        XCTAssertEqual(
            try harness.service.erase(ErasureFollower.Erasure(userID: "usr_gone", pseudonym: "del_x", email: nil, phone: "+15555550100")), .done)
        XCTAssertEqual(try rows(harness, "SELECT id AS v FROM requests ORDER BY id"), [stranger])
        XCTAssertEqual(try rows(harness, "SELECT request_id AS v FROM request_events WHERE request_id = '\(mine)'"), [])
        XCTAssertEqual(try rows(harness, "SELECT key AS v FROM send_log WHERE key = 'user:usr_gone'"), [])
        XCTAssertEqual(try rows(harness, "SELECT number AS v FROM requests WHERE number IS NOT NULL"), ["+15555550177"])

        // The number's send count outlives the user: one more start fills its limit of two.
        let next = try start(harness, "+15555550100", for: "usr_new")
        _ = try harness.service.cancel(requestID: next, owner: nil, logger: harness.logger)
        XCTAssertThrowsError(try start(harness, "+15555550100", for: "usr_new"), "the limit still counts the erased user's send") { error in
            guard case .rateLimited = error as? VerificationError else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(
            try harness.service.erase(ErasureFollower.Erasure(userID: "usr_gone", pseudonym: "del_x", email: nil, phone: "+15555550100")), .done,
            "erasing again (a lost report) is done again")
    }
}
