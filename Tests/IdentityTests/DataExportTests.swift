import Contract
import Foundation
import LineProtocol
import TestSupport
import XCTest

@testable import Identity

/// Identity's part of the user's copy of their data: everything it holds, never a secret.
final class DataExportTests: AccountLifeTestCase {
    func testItNeedsARecentStepUp() throws {
        try registerUser()
        assertReason(.stepUpRequired) { try service.exportData(token: try login(device: "new-phone").session) }
        let session = try elevatedLogin()
        clock.advance(seconds: service.settings.stepUpWindowSeconds + 1)
        assertReason(.stepUpRequired) { try service.exportData(token: session.session) }
    }

    func testItHoldsTheProfileFactorsSessionsDevicesLinksAndActivityButNoSecret() throws {
        let userID = try registerUser()
        let session = try elevatedLogin()
        let totp = try service.totpEnroll(token: session.session, caller: caller)
        let recovery = try service.recoveryCodes(token: session.session, caller: caller)
        let document = try service.exportData(token: session.session)

        XCTAssertEqual(document["format"], .int(DataExportContract.formatVersion))
        XCTAssertEqual(document["user_id"], .string(userID))
        XCTAssertEqual(document["profile"]?["username"], "alice")
        XCTAssertEqual(document["profile"]?["phone"], "+15555550100")
        XCTAssertEqual(document["factors"]?["totp"]?["activated_at"], .null, "enrolled, not yet activated")
        XCTAssertEqual(document["factors"]?["recovery_codes"]?.arrayValue?.count, recovery.count)
        XCTAssertEqual(document["sessions"]?.arrayValue?.map { $0["device_id"] }, ["iphone-1"])
        XCTAssertEqual(document["devices"]?.arrayValue?.first?["trusted_at"] != .null, true, "the device that paid its factor is trusted")
        XCTAssertEqual(document["email_links"]?.arrayValue?.map { $0["purpose"] }, ["verify"])
        XCTAssertTrue(document["activity"]?.arrayValue?.contains { $0["event"] == "login.password" || $0["event"] == "user.registered" } ?? false,
                      "\(document["activity"] ?? .null)")

        let text = String(decoding: document.encoded(), as: UTF8.self)
        let user = try XCTUnwrap(service.store.user(id: userID))
        for secret in [Self.password, session.session, session.deviceToken ?? "no token", totp.secret, user.passwordHash] + recovery {
            XCTAssertFalse(text.contains(secret), "the export holds a secret")
        }
        XCTAssertNil(text.firstMatch(of: /lk[sdre]_[A-Za-z0-9_-]{20}/), "no token of any kind")
    }
}
