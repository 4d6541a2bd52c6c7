import Foundation
import TestSupport
import XCTest

@testable import Verification

/// One live code per user, number and purpose: a session that still owes its login code (a
/// password thief's) neither blocks the owner's transfer code nor learns that one is pending.
class LiveCodeSlotTests: VerificationTestCase {
    static let number = "+15555550100"

    private static func ownerStart(_ harness: Harness, _ purpose: Purpose) throws -> String {
        try harness.start(number: Self.number, purpose: purpose) {
            $0.userID = "u_owner"
            $0.provenNumber = Self.number
        }
    }

    func testACodeOfOnePurposeNeverBlocksNorNamesACodeOfAnother() throws {
        let harness = try makeHarness()
        let transfer = try Self.ownerStart(harness, .transaction)
        let login = try Self.ownerStart(harness, .login)
        let proof = try Self.ownerStart(harness, .phoneProof)
        XCTAssertEqual(Set([transfer, login, proof]).count, 3)
        XCTAssertVerificationError(.concurrentVerification(requestID: transfer), try Self.ownerStart(harness, .transaction))
        XCTAssertVerificationError(.concurrentVerification(requestID: login), try Self.ownerStart(harness, .login))
        XCTAssertVerificationError(.concurrentVerification(requestID: proof), try Self.ownerStart(harness, .phoneProof))
        XCTAssertEqual(harness.provider.sent.count, 3, "nothing sent for a refused start")
    }

    func testABurstOfLoginAndTransferStartsGivesEachPurposeOneLiveCode() throws {
        let harness = try makeHarness()
        let started = SharedList<String>()
        let refused = SharedList<String>()
        DispatchQueue.concurrentPerform(iterations: 16) { index in
            let purpose: Purpose = index.isMultiple(of: 2) ? .login : .transaction
            do {
                started.append("\(purpose.rawValue) " + (try Self.ownerStart(harness, purpose)))
            } catch VerificationError.concurrentVerification(let id) {
                refused.append("\(purpose.rawValue) " + id)
            } catch {
                refused.append("\(purpose.rawValue) error \(error)")
            }
        }
        XCTAssertEqual(started.all.map { $0.prefix { $0 != " " } }.sorted(), ["login", "transaction"], "\(started.all)")
        XCTAssertEqual(Set(refused.all), Set(started.all), "every refusal names the live code of its own purpose: \(refused.all)")
        XCTAssertEqual(refused.all.count, 14)
    }

    func testARequestStoredBeforeThePurposeWasPartOfItsSlotStillHoldsIt() throws {
        let clock = ManualClock()
        let before = try databases.open(
            "verification", sqlite: Array(VerificationSchema.sqlite.prefix(7)), postgres: Array(VerificationSchema.postgres.prefix(7)))
        _ = try before.write { c in
            try c.run(
                """
                INSERT INTO requests (id, destination, number, user_id, purpose, workflow, step, brand, locale, code_length,
                    code_expiry_s, next_event_wait_s, code_hash, status, failures, created_at, code_expires_at)
                VALUES ('vr_test-1_old', 'user:u_owner +15555550100', '+15555550100', 'u_owner', 'transaction', 'sms', 0, 'Latchkey',
                    'en', 6, 300, 120, ?, 'pending', 0, ?, ?)
                """, [.blob([1, 2, 3]), .integer(clock.nowMilliseconds()), .integer(clock.nowMilliseconds() + 300_000)])
        }
        let harness = try makeHarness()
        XCTAssertVerificationError(.concurrentVerification(requestID: "vr_test-1_old"), try Self.ownerStart(harness, .transaction))
        XCTAssertNoThrow(try Self.ownerStart(harness, .login), "the old transfer code does not block a login code")
    }
}
