import Storage
import XCTest

@testable import Verification

/// Migration 7 rebuilds `deliveries` keyed by id: the messages a replica stored before, queued
/// or being sent, must come through whole on either dialect.
class DeliveriesMigrationTests: VerificationTestCase {
    func testMessagesStoredBeforeTheRebuildComeThroughWhole() throws {
        let before = try databases.open(
            "verification", sqlite: Array(VerificationSchema.sqlite.prefix(6)), postgres: Array(VerificationSchema.postgres.prefix(6)))
        try before.write { c in
            for (id, state) in [("dl_1", "queued"), ("dl_2", "sending")] {
                try c.run(
                    """
                    INSERT INTO deliveries (id, request_id, step, channel, trigger, code_seed, state, attempts, next_attempt_at, created_at, claimed_by)
                    VALUES (?, 'vr_a', 0, 'sms', 'start', ?, ?, 1, 50, 40, 'verification-1')
                    """, [.text(id), .blob([1, 2, 3]), .text(state)])
            }
        }

        let store = SQLVerificationStore(database: try openDatabase())
        XCTAssertEqual(try store.database.schemaVersion(), VerificationSchema.sqlite.count)
        XCTAssertEqual(try store.read { tx in try tx.queuedDeliveryCount() }, 2)
        let claimed = try store.write { tx in try tx.claimDueDelivery(nowMilliseconds: 60, claimant: "verification-2") }
        XCTAssertEqual(claimed?.delivery.id, "dl_1", "the queued message is due; the one being sent is not")
        XCTAssertEqual(claimed?.delivery.codeSeed, [1, 2, 3])
        XCTAssertEqual(claimed?.moreDue, false)
    }
}
