import Foundation
import Secrets
import TestSupport
import XCTest

@testable import Identity

/// What an intruder with the password and one stolen factor plants (an authenticator app,
/// recovery codes, a device key) is mailed to the owner at once, and the owner's password reset
/// takes the recent plants away with the device tokens and keys.
final class FactorChangeTests: IdentityTestCase {
    private let mails = SharedList<(to: String, subject: String, text: String)>()
    /// The notices of factor changes (not registration's verification link).
    private var notices: [(to: String, subject: String, text: String)] { mails.all.filter { $0.subject.hasPrefix("Latchkey:") } }
    private let intruder = Caller(client: "198.51.100.23")

    override func setUpWithError() throws {
        try super.setUpWithError()
        let mails = mails
        service = try makeService(notices: UserNotices { mails.append(($0.to, $0.subject ?? "", $0.text)) })
        try registerUser()
    }

    private func code(_ enrollment: TotpEnrollment) throws -> String {
        Totp.code(secret: try XCTUnwrap(Base32.decode(enrollment.secret)), step: Totp.step(at: clock.nowSeconds, .standard), .standard)
    }

    /// Password and a stolen SMS code on the intruder's phone, then every plant it can make.
    private func plantFactors() throws -> (enrollment: TotpEnrollment, codes: [String]) {
        let session = try login(device: "intruder-phone", from: intruder)
        _ = try service.elevate(sessionID: session.sessionID, factor: "sms", caller: intruder)
        let enrollment = try service.totpEnroll(token: session.session, caller: intruder)
        try service.totpActivate(token: session.session, code: try code(enrollment), caller: intruder)
        let codes = try service.recoveryCodes(token: session.session, caller: intruder)
        let key = FakeiPhone(deviceID: "intruder-phone")
        _ = try service.enrollKey(token: session.session, deviceID: "intruder-phone", publicKey: key.publicKeyBase64, protection: "biometry", caller: intruder)
        return (enrollment, codes)
    }

    func testEveryPlantedFactorIsMailedToTheOwnerAtOnceNamingTheDeviceAndTime() throws {
        let (enrollment, codes) = try plantFactors()
        let sent = notices
        XCTAssertEqual(sent.map(\.subject), [
            "Latchkey: an authenticator app was set up", "Latchkey: new recovery codes were made", "Latchkey: a device key was added",
        ])
        for mail in sent {
            XCTAssertEqual(mail.to, "alice@example.com")
            XCTAssertTrue(mail.text.contains("\"intruder-phone\""), mail.text)
            XCTAssertTrue(mail.text.contains(UserNotices.timestamp(clock.nowSeconds)), mail.text)
            XCTAssertTrue(mail.text.contains("reset your password"), mail.text)
            XCTAssertFalse(mail.text.contains(enrollment.secret), "never the secret")
            for code in codes { XCTAssertFalse(mail.text.contains(code), "never a code") }
        }
        let events = try service.store.events(userID: try service.findByEmail("alice@example.com"), limit: 50, before: nil).map(\.event)
        for name in ["totp.enrolled", "recovery_codes.generated", "key.enrolled"] { XCTAssertTrue(events.contains(name), "\(name) in \(events)") }
    }

    func testRemovingAFactorIsMailedToo() throws {
        let session = try elevatedLogin()
        let enrollment = try service.totpEnroll(token: session.session, caller: caller)
        try service.totpActivate(token: session.session, code: try code(enrollment), caller: caller)
        try service.totpRemove(token: session.session, caller: caller)
        let key = FakeiPhone(deviceID: "iphone-1")
        let keyID = try service.enrollKey(token: session.session, deviceID: "iphone-1", publicKey: key.publicKeyBase64, protection: "user_presence", caller: caller)
        try service.revokeKey(token: session.session, keyID: keyID, caller: caller)
        XCTAssertEqual(notices.map(\.subject), [
            "Latchkey: an authenticator app was set up", "Latchkey: an authenticator app was removed",
            "Latchkey: a device key was added", "Latchkey: a device key was removed",
        ])
    }

    func testAResetRemovesWhatWasPlantedSoThatItPaysNothing() throws {
        let (enrollment, codes) = try plantFactors()
        clock.advance(seconds: 3600)
        let userID = try service.findByEmail("alice@example.com")
        let cleanup = try service.cleanUpAfterReset(userID: userID, caller: caller)
        XCTAssertEqual(cleanup.recentFactors, ["totp", "recovery_codes"])
        XCTAssertEqual(cleanup.keys, 1)
        XCTAssertEqual(cleanup.deviceTokens, 1)

        let fresh = try login(device: "new-phone")
        XCTAssertEqual(fresh.requiredFactors, ["sms"], "the planted app is no factor any more")
        assertReason(.notFound) { try service.totpVerify(token: fresh.session, code: try code(enrollment), caller: intruder) }
        assertReason(.invalidCode) { try service.recoveryVerify(token: fresh.session, code: codes[0], caller: intruder) }
        XCTAssertEqual(try service.introspect(token: fresh.session).aal, 1)
        let events = try service.store.events(userID: userID, limit: 50, before: nil).filter { $0.event == "factor.removed" }.map(\.outcome)
        XCTAssertEqual(Set(events), ["totp", "recovery_codes"])
    }

    /// The owner's own factors, set up before the look-back window, survive a reset: an e-mail
    /// alone (what a reset proves) must not strip a second factor that predates the trouble.
    func testFactorsOlderThanTheWindowSurviveAReset() throws {
        let session = try elevatedLogin()
        let enrollment = try service.totpEnroll(token: session.session, caller: caller)
        try service.totpActivate(token: session.session, code: try code(enrollment), caller: caller)
        let codes = try service.recoveryCodes(token: session.session, caller: caller)
        clock.advance(seconds: service.settings.resetRemovesFactorsSetUpWithinSeconds + 1)
        let cleanup = try service.cleanUpAfterReset(userID: try service.findByEmail("alice@example.com"), caller: caller)
        XCTAssertEqual(cleanup.recentFactors, [])
        let fresh = try login(device: "new-phone")
        XCTAssertEqual(fresh.requiredFactors, ["totp", "sms"])
        XCTAssertEqual(try service.recoveryVerify(token: fresh.session, code: codes[0], caller: caller).aal, 2)
    }
}
