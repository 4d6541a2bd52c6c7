import Foundation
import Secrets
import Storage
import TestSupport
import XCTest

@testable import Identity

final class TotpTests: IdentityTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try registerUser()
    }

    /// What the authenticator app would show at `time` for an enrolled secret.
    private func appCode(_ enrollment: TotpEnrollment, at time: Int64? = nil) throws -> String {
        let secret = try XCTUnwrap(Base32.decode(enrollment.secret))
        return Totp.code(secret: secret, step: Totp.step(at: time ?? clock.nowSeconds, .standard), .standard)
    }

    private func wrong(_ code: String) -> String { code == "000000" ? "111111" : "000000" }

    /// Enrolls and activates an app on an elevated session; returns the session and enrollment.
    private func activeApp() throws -> (LoginResult, TotpEnrollment) {
        let session = try elevatedLogin()
        let enrollment = try service.totpEnroll(token: session.session, caller: caller)
        try service.totpActivate(token: session.session, code: try appCode(enrollment), caller: caller)
        clock.advance(seconds: 60)  // past the activating code's step and its skew
        return (session, enrollment)
    }

    func testEnrollingNeedsARecentStepUpAndGivesASecretAndItsURIOnce() throws {
        let weak = try appLogin()
        assertIdentityError(.factorsOwed(["sms"])) { try service.totpEnroll(token: weak.session, caller: caller) }
        let strong = try elevatedLogin()
        let enrollment = try service.totpEnroll(token: strong.session, caller: caller)
        XCTAssertEqual(Base32.decode(enrollment.secret)?.count, 20)
        XCTAssertEqual(
            enrollment.uri,
            "otpauth://totp/Latchkey:alice?secret=\(enrollment.secret)&issuer=Latchkey&algorithm=SHA1&digits=6&period=30")
        clock.advance(seconds: 601)
        assertReason(.stepUpRequired) { try service.totpEnroll(token: strong.session, caller: caller) }
    }

    func testAPendingSecretIsNoFactorUntilOneGoodCode() throws {
        let session = try elevatedLogin()
        let enrollment = try service.totpEnroll(token: session.session, caller: caller)
        assertReason(.notFound) { try service.totpVerify(token: session.session, code: try appCode(enrollment), caller: caller) }
        XCTAssertEqual(try appLogin().requiredFactors, [], "a trusted device, no factor on")
        assertIdentityError(.invalidCode(attemptsLeft: 2)) { try service.totpActivate(token: session.session, code: wrong(try appCode(enrollment)), caller: caller) }
        try service.totpActivate(token: session.session, code: try appCode(enrollment), caller: caller)
        XCTAssertEqual(try appLogin().requiredFactors, ["totp"])
        XCTAssertEqual(try login(device: "ipad-2").requiredFactors, ["totp", "sms"], "any one is enough")
        let preferences = try service.preferences(token: session.session, smsVerification: nil, sitekey: nil, caller: caller)
        XCTAssertEqual(preferences.factors, ["sms", "totp"])
        assertReason(.conflict) { try service.totpEnroll(token: session.session, caller: caller) }
    }

    func testVerifyLiftsTheSessionWithinOneStepOfSkewAndRefusesReplays() throws {
        let (_, enrollment) = try activeApp()
        let session = try appLogin()
        XCTAssertEqual(session.requiredFactors, ["totp"])
        let late = try appCode(enrollment, at: clock.nowSeconds - 30)
        XCTAssertEqual(try service.totpVerify(token: session.session, code: late, caller: caller), 2)
        XCTAssertEqual(try service.introspect(token: session.session).aal, 2)
        let other = try appLogin()
        // the same code again, within its window
        assertIdentityError(.invalidCode(attemptsLeft: 2)) {
            try service.totpVerify(token: other.session, code: late, caller: caller)
        }
        // two steps old
        assertIdentityError(.invalidCode(attemptsLeft: 1)) {
            try service.totpVerify(token: other.session, code: try appCode(enrollment, at: clock.nowSeconds - 60), caller: caller)
        }
        XCTAssertEqual(try service.totpVerify(token: other.session, code: try appCode(enrollment, at: clock.nowSeconds + 30), caller: caller), 2)
        let events = try service.store.events(userID: try XCTUnwrap(try service.store.user(username: "alice")).userID, limit: 30, before: nil)
        XCTAssertEqual(events.filter { $0.event == "factor.passed" }.map(\.outcome), ["totp", "totp"])
        XCTAssertEqual(events.filter { $0.event == "factor.failed" }.map(\.outcome), ["totp", "totp"])
    }

    func testWrongCodesLockTheFactorAndTheRightCodeWaitsToo() throws {
        let (_, enrollment) = try activeApp()
        let session = try appLogin()
        for left in [2, 1, 0] {
            assertIdentityError(.invalidCode(attemptsLeft: left)) { try service.totpVerify(token: session.session, code: wrong(try appCode(enrollment)), caller: caller) }
        }
        // locked, the right code unchecked
        assertIdentityError(.factorLocked(retryAfterSeconds: 30)) {
            try service.totpVerify(token: session.session, code: try appCode(enrollment), caller: caller)
        }
        clock.advance(seconds: 30)
        XCTAssertEqual(try service.totpVerify(token: session.session, code: try appCode(enrollment), caller: caller), 2)
    }

    func testABurstOfTheSameCodePassesOnce() throws {
        let (_, enrollment) = try activeApp()
        let sessions = try (0..<12).map { _ in try appLogin().session }
        let code = try appCode(enrollment)
        let passed = Counter()
        let (service, caller) = (self.service!, self.caller)
        DispatchQueue.concurrentPerform(iterations: sessions.count) { index in
            if (try? service.totpVerify(token: sessions[index], code: code, caller: caller)) == 2 { passed.add() }
        }
        XCTAssertEqual(passed.value, 1)
    }

    func testTheSecretIsSealedAtRestAndUselessUnderAnotherServerKey() throws {
        let (session, enrollment) = try activeApp()
        let secret = try XCTUnwrap(Base32.decode(enrollment.secret))
        // What the store holds, on either backend: the row itself.
        let sealed = try XCTUnwrap(try service.store.database.read { c in
            try c.queryOne("SELECT sealed_secret FROM totp_secrets")?.blob("sealed_secret")
        })
        XCTAssertNil(Data(sealed).range(of: Data(secret)), "the raw secret is not stored")
        XCTAssertNil(Data(sealed).range(of: Data(enrollment.secret.utf8)), "nor its Base32")
        let otherKey = try makeService { $0.serverKey = SecureRandom.bytes(32) }
        XCTAssertThrowsError(try otherKey.totpVerify(token: try appLogin().session, code: try appCode(enrollment), caller: caller)) { error in
            XCTAssertFalse(String(describing: error).contains(enrollment.secret))
        }
        try service.totpRemove(token: session.session, caller: caller)
        XCTAssertEqual(try appLogin().requiredFactors, [])
        assertReason(.notFound) { try service.totpRemove(token: session.session, caller: caller) }
    }

    /// The app shows 6 digits: any other shape is a malformed parameter, refused before the
    /// code is checked, so it spends none of the user's attempts.
    func testACodeThatIsNotSixDigitsIsInvalidParamsAndSpendsNoAttempt() throws {
        let (_, enrollment) = try activeApp()
        let session = try appLogin()
        for malformed in ["1234567", "12345678", "12345", "12345a"] {
            XCTAssertEqual(assertReason(.invalidParams) { try service.totpVerify(token: session.session, code: malformed, caller: caller) }?.data?["field"], "code")
        }
        assertIdentityError(.invalidCode(attemptsLeft: 2)) { try service.totpVerify(token: session.session, code: wrong(try appCode(enrollment)), caller: caller) }
    }
}
