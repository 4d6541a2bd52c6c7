import Delivery
import Foundation
import Secrets
import TestSupport
import XCTest

@testable import Identity

/// A signed-in user's own account changes: the password, the address's proof, the address.
/// Mails are caught as the provider would get them; their links are used as the app would.
class AccountLifeTestCase: IdentityTestCase {
    let mails = SharedList<OutgoingMessage>()

    override func setUpWithError() throws {
        try super.setUpWithError()
        service = try makeAccountService()
    }

    func makeAccountService() throws -> IdentityService {
        let mails = mails
        return try makeService(notices: UserNotices { mails.append($0) })
    }

    /// The mails sent to `address` whose subject contains `subject`.
    func mailed(to address: String, _ subject: String) -> [OutgoingMessage] {
        mails.all.filter { $0.to == address && (subject.isEmpty || ($0.subject ?? "").contains(subject)) }
    }

    /// The one link token in the latest such mail.
    func linkToken(to address: String, _ subject: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let mail = try XCTUnwrap(mailed(to: address, subject).last, "no mail \"\(subject)\" to \(address) in \(mails.all.map(\.subject))", file: file, line: line)
        let tokens = Set(mail.text.matches(of: /lke_[A-Za-z0-9_-]{43}/).map { String($0.output) })
        XCTAssertEqual(tokens.count, 1, Self.redacted(mail.text), file: file, line: line)
        return try XCTUnwrap(tokens.first, file: file, line: line)
    }

    /// A mail's text fit for a failure message: its tokens cut short, so no link that works
    /// reaches a CI log.
    static func redacted(_ text: String) -> String { text.replacing(/(lk[a-z]_)[A-Za-z0-9_-]+/) { "\($0.output.1)…" } }

    func preferences(_ session: String) throws -> Preferences {
        try service.preferences(token: session, smsVerification: nil, sitekey: nil, caller: caller)
    }
}

final class ChangePasswordTests: AccountLifeTestCase {
    static let newPassword = "a much longer passphrase"

    func testItNeedsARecentStepUp() throws {
        try registerUser()
        let session = try elevatedLogin()
        clock.advance(seconds: service.settings.stepUpWindowSeconds + 1)
        assertReason(.stepUpRequired) {
            try service.changePassword(token: session.session, currentPassword: Self.password, newPassword: Self.newPassword, caller: caller)
        }
        let owing = try login(device: "new-phone")
        assertReason(.stepUpRequired) {
            try service.changePassword(token: owing.session, currentPassword: Self.password, newPassword: Self.newPassword, caller: caller)
        }
        XCTAssertNoThrow(try login(), "the password is unchanged")
    }

    func testOtherSessionsAndDeviceTokensEndThisOneStaysAndTheOwnerIsMailed() throws {
        try registerUser()
        let other = try elevatedLogin(device: "ipad-2")
        let stale = try login(device: "old-mac")
        let session = try elevatedLogin()
        let ended = try service.changePassword(token: session.session, currentPassword: Self.password, newPassword: Self.newPassword, caller: caller)
        XCTAssertEqual(ended, 2)
        XCTAssertNoThrow(try service.introspect(token: session.session), "the caller's session stays")
        assertReason(.unauthenticated) { try service.introspect(token: other.session) }
        assertReason(.unauthenticated) { try service.introspect(token: stale.session) }

        assertReason(.invalidCredentials) { try login() }
        XCTAssertEqual(try appLogin(password: Self.newPassword).requiredFactors, [], "this device's token is kept: still trusted")
        XCTAssertEqual(try login(password: Self.newPassword, device: "ipad-2", token: other.deviceToken).requiredFactors, ["sms"], "its token went")

        let mail = try XCTUnwrap(mailed(to: "alice@example.com", "password was changed").first)
        XCTAssertTrue(mail.text.contains("\"iphone-1\""), mail.text)
        XCTAssertFalse(mail.text.contains(Self.newPassword))
        XCTAssertNotNil(mail.html)
        XCTAssertTrue(try service.store.events(userID: session.userID(service), limit: 20, before: nil).map(\.event).contains("password.changed"))
    }

    func testAWrongCurrentPasswordSpendsTheLoginBudgetUntilTheAccountLocks() throws {
        try registerUser()
        let session = try elevatedLogin()
        for _ in 0..<service.settings.accountThrottle.freeFailures {
            assertReason(.invalidCredentials) {
                try service.changePassword(token: session.session, currentPassword: "a wrong guess", newPassword: Self.newPassword, caller: caller)
            }
        }
        assertReason(.locked) {
            try service.changePassword(token: session.session, currentPassword: Self.password, newPassword: Self.newPassword, caller: caller)
        }
        assertReason(.locked) { try login(device: "new-phone") }
    }

    func testTheNewPasswordMeetsThePolicy() throws {
        try registerUser()
        let session = try elevatedLogin()
        let checksBefore = service.passwordChecks
        for weak in ["short", "hunter2hunter2", "alice-is-great"] {
            assertReason(.weakPassword) { try service.changePassword(token: session.session, currentPassword: Self.password, newPassword: weak, caller: caller) }
        }
        XCTAssertEqual(service.passwordChecks, checksBefore, "refused before the current password is even checked")
    }
}

extension LoginResult {
    func userID(_ service: IdentityService) throws -> String { try service.introspect(token: session).userID }
}

final class EmailVerificationTests: AccountLifeTestCase {
    func testRegistrationMailsALinkThatVerifiesTheAddressOnce() throws {
        try registerUser()
        let session = try elevatedLogin()
        XCTAssertFalse(try preferences(session.session).emailVerified)
        let mail = try XCTUnwrap(mailed(to: "alice@example.com", "Confirm your").first)
        let token = try linkToken(to: "alice@example.com", "Confirm your")
        XCTAssertTrue(mail.text.contains("latchkey://verify-email?token=\(token)"), Self.redacted(mail.text))
        XCTAssertTrue(try XCTUnwrap(mail.html).contains("href=\"latchkey://verify-email?token=\(token)\""))

        XCTAssertEqual(try service.verifyEmail(token: token, caller: caller), "alice@example.com")
        XCTAssertTrue(try preferences(session.session).emailVerified)
        assertReason(.invalidToken) { try service.verifyEmail(token: token, caller: caller) }
    }

    func testWithAPublicOriginTheMailCarriesTheUniversalLinkToo() throws {
        var links = AccountLinks()
        links.publicOrigin = "https://bank.example.com"
        let mails = mails
        service = try makeService({ $0.accountLinks = links }, notices: UserNotices { mails.append($0) })
        try registerUser()
        let token = try linkToken(to: "alice@example.com", "Confirm your")
        let mail = try XCTUnwrap(mailed(to: "alice@example.com", "Confirm your").first)
        XCTAssertTrue(mail.text.contains("https://bank.example.com/verify-email?token=\(token)"), Self.redacted(mail.text))
        XCTAssertTrue(mail.text.contains("latchkey://verify-email?token=\(token)"), Self.redacted(mail.text))
    }

    func testTwentyParallelUsesOfOneLinkThroughTwoServicesVerifyOnce() throws {
        try registerUser()
        let token = try linkToken(to: "alice@example.com", "Confirm your")
        let services = [service!, try makeAccountService()]
        let outcomes = Tally()
        let caller = caller
        DispatchQueue.concurrentPerform(iterations: 20) { index in
            do {
                _ = try services[index % 2].verifyEmail(token: token, caller: caller)
                outcomes.record("ok")
            } catch let error as IdentityError {
                outcomes.record(error.rpcError.reasonText ?? "no reason")
            } catch {
                outcomes.record("unexpected: \(error)")
            }
        }
        XCTAssertEqual(outcomes.counts, ["ok": 1, "invalid_token": 19])
        let userID = try service.findByEmail("alice@example.com")
        XCTAssertEqual(try service.store.events(userID: userID, limit: 50, before: nil).filter { $0.event == "email.verified" }.count, 1)
    }

    func testAResendReplacesTheLinkAtMostOnceAMinute() throws {
        try registerUser()
        let session = try elevatedLogin()
        let first = try linkToken(to: "alice@example.com", "Confirm your")
        assertReason(.rateLimited) { try service.resendVerification(token: session.session, caller: caller) }
        clock.advance(seconds: 60)
        try service.resendVerification(token: session.session, caller: caller)
        let second = try linkToken(to: "alice@example.com", "Confirm your")
        XCTAssertNotEqual(first, second)
        assertReason(.invalidToken) { try service.verifyEmail(token: first, caller: caller) }
        XCTAssertNoThrow(try service.verifyEmail(token: second, caller: caller))
        clock.advance(seconds: 60)
        assertReason(.conflict) { try service.resendVerification(token: session.session, caller: caller) }
    }

    func testALinkExpiresAndIsNoGoodForAnotherPurposeOrAnotherAddress() throws {
        try registerUser()
        let token = try linkToken(to: "alice@example.com", "Confirm your")
        assertReason(.invalidToken) { try service.confirmEmailChange(token: token, caller: caller) }
        assertReason(.invalidToken) { try service.revertEmailChange(token: token, caller: caller) }
        assertReason(.invalidToken) { try service.verifyEmail(token: "lke_not-a-token", caller: caller) }
        clock.advance(seconds: service.settings.emailLinkSeconds)
        assertReason(.invalidToken) { try service.verifyEmail(token: token, caller: caller) }
    }

    func testTheOperatorCanVouchForAnAddress() throws {
        let userID = try registerUser()
        XCTAssertTrue(try service.operatorVerifyEmail(userID: userID, caller: caller))
        XCTAssertFalse(try service.operatorVerifyEmail(userID: userID, caller: caller), "once")
        XCTAssertTrue(try preferences(try elevatedLogin().session).emailVerified)
    }
}

/// Registration never says whether an address has an account.
final class RegistrationPrivacyTests: AccountLifeTestCase {
    func testATakenAddressGetsTheSameAnswerAndItsOwnerAMail() throws {
        let alice = try registerUser()
        let answer = try registerUser("mallory", email: "ALICE@example.com")
        XCTAssertTrue(answer.hasPrefix("usr_"))
        XCTAssertEqual(answer.count, alice.count)
        XCTAssertNotEqual(answer, alice)
        assertReason(.notFound) { try service.user(id: answer) }
        assertReason(.invalidCredentials) { try login("mallory") }
        XCTAssertEqual(try service.findByEmail("alice@example.com"), alice)

        XCTAssertEqual(mailed(to: "alice@example.com", "").count, 2, "the verification link, then the notice: one mail each time")
        XCTAssertEqual(mailed(to: "alice@example.com", "Someone tried to sign up").count, 1)
        XCTAssertTrue(try service.store.events(userID: alice, limit: 20, before: nil).map(\.event).contains("registration.attempted"))
        XCTAssertEqual(
            try service.store.database.read { c in try c.queryOne("SELECT COUNT(*) AS n FROM email_tokens")?.int("n") }, 1,
            "no link for the taken address")
    }

    func testParallelRegistrationsOfOneAddressMakeOneAccount() throws {
        let services = [service!, try makeAccountService()]
        let caller = caller
        let outcomes = Tally()
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            do {
                _ = try services[index % 2].register(
                    .init(username: "user\(index)", password: Self.password, email: "shared@example.com", phone: "5555550100"), caller: caller)
                outcomes.record("ok")
            } catch {
                outcomes.record("unexpected: \(error)")
            }
        }
        XCTAssertEqual(outcomes.counts, ["ok": 8])
        XCTAssertEqual(try service.store.database.read { c in try c.queryOne("SELECT COUNT(*) AS n FROM users")?.int("n") }, 1)
        XCTAssertEqual(mailed(to: "shared@example.com", "Confirm your").count, 1)
        XCTAssertEqual(mailed(to: "shared@example.com", "Someone tried").count, 7)
    }

    func testATakenUsernameIsStillAConflict() throws {
        try registerUser()
        assertIdentityError(.conflict(field: "username", "this username is taken")) { try registerUser("ALICE", email: "other@example.com") }
    }
}

final class EmailChangeTests: AccountLifeTestCase {
    /// Alice with a verified address and a stepped-up session.
    private func verifiedAlice() throws -> LoginResult {
        try registerUser()
        _ = try service.verifyEmail(token: try linkToken(to: "alice@example.com", "Confirm your"), caller: caller)
        return try elevatedLogin()
    }

    func testTheNewAddressConfirmsTheChangeAndTheOldOneIsToldAtOnce() throws {
        let session = try verifiedAlice()
        try service.changeEmail(token: session.session, email: "Alice.New@Example.com", caller: caller)
        let notice = try XCTUnwrap(mailed(to: "alice@example.com", "is being changed").first)
        XCTAssertTrue(notice.text.contains("a***@example.com"), notice.text)
        XCTAssertEqual(try preferences(session.session).email, "alice@example.com", "nothing changes before the new address confirms")

        let confirm = try linkToken(to: "alice.new@example.com", "Confirm your new")
        XCTAssertEqual(try service.confirmEmailChange(token: confirm, caller: caller), "alice.new@example.com")
        let now = try preferences(session.session)
        XCTAssertEqual(now.email, "alice.new@example.com")
        XCTAssertTrue(now.emailVerified, "the confirmation proved it")
        XCTAssertEqual(try service.findByEmail("alice.new@example.com"), try session.userID(service))
        assertReason(.notFound) { try service.findByEmail("alice@example.com") }
        assertReason(.invalidToken) { try service.confirmEmailChange(token: confirm, caller: caller) }
    }

    func testTheOldAddressUndoesAnAppliedChangeAndEverySessionEnds() throws {
        let session = try verifiedAlice()
        let other = try elevatedLogin(device: "ipad-2")
        try service.changeEmail(token: session.session, email: "thief@example.net", caller: caller)
        _ = try service.confirmEmailChange(token: try linkToken(to: "thief@example.net", "Confirm your new"), caller: caller)
        let revert = try linkToken(to: "alice@example.com", "is being changed")
        clock.advance(seconds: 6 * 86_400)

        XCTAssertEqual(try service.revertEmailChange(token: revert, caller: caller), "alice@example.com")
        for token in [session.session, other.session] { assertReason(.unauthenticated) { try service.introspect(token: token) } }
        XCTAssertEqual(try appLogin().requiredFactors, ["sms"], "no device token survives")
        let restored = try preferences(try elevatedLogin().session)
        XCTAssertEqual(restored.email, "alice@example.com")
        XCTAssertTrue(restored.emailVerified, "verified as it was")
        XCTAssertEqual(mailed(to: "alice@example.com", "was restored").count, 1)
        assertReason(.invalidToken) { try service.revertEmailChange(token: revert, caller: caller) }
    }

    func testUndoingAPendingChangeVoidsItsConfirmation() throws {
        let session = try verifiedAlice()
        try service.changeEmail(token: session.session, email: "thief@example.net", caller: caller)
        let confirm = try linkToken(to: "thief@example.net", "Confirm your new")
        _ = try service.revertEmailChange(token: try linkToken(to: "alice@example.com", "is being changed"), caller: caller)
        assertReason(.invalidToken) { try service.confirmEmailChange(token: confirm, caller: caller) }
    }

    func testTheUndoLinkLastsAWeek() throws {
        let session = try verifiedAlice()
        try service.changeEmail(token: session.session, email: "new@example.com", caller: caller)
        let revert = try linkToken(to: "alice@example.com", "is being changed")
        clock.advance(seconds: service.settings.emailRevertSeconds)
        assertReason(.invalidToken) { try service.revertEmailChange(token: revert, caller: caller) }
    }

    func testAnAddressWithAnAccountGetsTheSameAnswerAndNoLink() throws {
        try registerUser("bob", email: "bob@example.com")
        let session = try verifiedAlice()
        XCTAssertNoThrow(try service.changeEmail(token: session.session, email: "bob@example.com", caller: caller))
        XCTAssertEqual(mailed(to: "bob@example.com", "Your e-mail address and").count, 1)
        XCTAssertTrue(mailed(to: "bob@example.com", "Confirm your new").isEmpty)
        XCTAssertEqual(mailed(to: "alice@example.com", "was refused").count, 1)
        XCTAssertEqual(try preferences(session.session).email, "alice@example.com")
    }

    func testAnUnprovenOldAddressGetsNoUndoLink() throws {
        try registerUser()
        let session = try elevatedLogin()
        try service.changeEmail(token: session.session, email: "alice@example.org", caller: caller)
        XCTAssertTrue(mailed(to: "alice@example.com", "is being changed").isEmpty, "it may be a stranger's (a typo)")
        _ = try service.confirmEmailChange(token: try linkToken(to: "alice@example.org", "Confirm your new"), caller: caller)
        XCTAssertEqual(try preferences(session.session).email, "alice@example.org")
    }

    func testAConfirmationFindsTheAddressTakenMeanwhile() throws {
        let session = try verifiedAlice()
        try service.changeEmail(token: session.session, email: "new@example.com", caller: caller)
        try registerUser("carol", email: "new@example.com")
        let confirm = try linkToken(to: "new@example.com", "Confirm your new")
        assertReason(.conflict) { try service.confirmEmailChange(token: confirm, caller: caller) }
        XCTAssertEqual(try preferences(session.session).email, "alice@example.com")
    }

    func testItNeedsARecentStepUpAndANewAddress() throws {
        let session = try verifiedAlice()
        assertReason(.invalidParams) { try service.changeEmail(token: session.session, email: "ALICE@example.com", caller: caller) }
        clock.advance(seconds: service.settings.stepUpWindowSeconds + 1)
        assertReason(.stepUpRequired) { try service.changeEmail(token: session.session, email: "new@example.com", caller: caller) }
    }

    func testASecondChangeReplacesThePendingOne() throws {
        let session = try verifiedAlice()
        try service.changeEmail(token: session.session, email: "one@example.com", caller: caller)
        let first = try linkToken(to: "one@example.com", "Confirm your new")
        try service.changeEmail(token: session.session, email: "two@example.com", caller: caller)
        assertReason(.invalidToken) { try service.confirmEmailChange(token: first, caller: caller) }
        XCTAssertEqual(try service.confirmEmailChange(token: try linkToken(to: "two@example.com", "Confirm your new"), caller: caller), "two@example.com")
    }
}

final class NewDeviceNoticeTests: AccountLifeTestCase {
    private var notices: [OutgoingMessage] { mailed(to: "alice@example.com", "a sign-in on a new device") }

    func testASignInCompletedOnANewDeviceIsMailedOnceNamingDeviceAddressAndTime() throws {
        try registerUser()
        _ = try elevatedLogin()
        XCTAssertTrue(notices.isEmpty, "the first device after registration is no news")

        let stranger = Caller(client: "198.51.100.23")
        var other = try service.login(username: "alice", password: Self.password, deviceID: "unknown-laptop", caller: stranger)
        _ = try service.elevate(sessionID: other.sessionID, factor: "sms", caller: stranger)
        let notice = try XCTUnwrap(notices.first)
        XCTAssertTrue(notice.text.contains("\"unknown-laptop\""), notice.text)
        XCTAssertTrue(notice.text.contains("198.51.100.23"), notice.text)
        XCTAssertTrue(notice.text.contains(UserNotices.timestamp(clock.nowSeconds)), notice.text)

        // The same device again, with the token it was given: trusted, no second mail.
        other = try service.login(username: "alice", password: Self.password, deviceID: "unknown-laptop", deviceToken: other.deviceToken, caller: stranger)
        XCTAssertEqual(other.requiredFactors, [])
        _ = try elevatedLogin()
        XCTAssertEqual(notices.count, 1)
    }
}

final class ChangePhoneTests: AccountLifeTestCase {
    func testANewNumberIsUnprovenAndHoldsSMSMoneyForTheCoolingOff() throws {
        let userID = try registerUser()
        try service.provePhone(userID: userID, phone: "+15555550100", caller: caller)
        let session = try elevatedLogin()
        XCTAssertNil(service.phoneCoolingOffUntil(try service.user(id: userID)), "the registered number holds nothing")

        try service.changePhone(token: session.session, phone: "(555) 555-0199", caller: caller)
        let user = try service.user(id: userID)
        XCTAssertEqual(user.phone, "+15555550199")
        XCTAssertFalse(try service.isPhoneProven(userID: userID), "a claim until its owner passes a proof code")
        XCTAssertEqual(service.phoneCoolingOffUntil(user), clock.nowSeconds + service.settings.phoneChangeCoolingOffSeconds)
        let mail = try XCTUnwrap(mailed(to: "alice@example.com", "phone number was changed").first)
        XCTAssertTrue(mail.text.contains("ending in 99"), mail.text)
        XCTAssertFalse(mail.text.contains("5555550199"), "never the whole number")

        clock.advance(seconds: service.settings.phoneChangeCoolingOffSeconds)
        XCTAssertNil(service.phoneCoolingOffUntil(try service.user(id: userID)))
    }

    func testTheOldNumberIsOwedOneSMSNoticeInTheAccountsLanguageUntilItIsReportedSent() throws {
        let userID = try service.register(
            .init(username: "alice", password: Self.password, email: "alice@example.com", phone: "5555550100", locale: .french), caller: caller)
        let session = try elevatedLogin()
        try service.changePhone(token: session.session, phone: "+15555550199", caller: caller)
        try service.changePhone(token: session.session, phone: "+15555550188", caller: caller)
        let due = try service.store.phoneNoticesDue(limit: 10)
        XCTAssertEqual(due.map(\.number), ["+15555550100", "+15555550199"], "each number the account left, in order")
        XCTAssertEqual(Set(due.map(\.locale)), [.french])
        try service.store.phoneNoticeSent(noticeID: due[0].noticeID)
        try service.store.phoneNoticeSent(noticeID: due[0].noticeID)
        XCTAssertEqual(try service.store.phoneNoticesDue(limit: 10).map(\.number), ["+15555550199"], "a sent notice forgets its number")

        _ = try service.requestDeletion(token: session.session, password: Self.password, caller: caller)
        _ = try service.erasureReported(service: "accounts", userID: userID, refusal: nil)
        XCTAssertEqual(try service.store.phoneNoticesDue(limit: 10), [], "a deleted user's notices go with the rest")
    }

    func testItNeedsARecentStepUpAndAnotherNumber() throws {
        try registerUser()
        let session = try elevatedLogin()
        assertReason(.invalidParams) { try service.changePhone(token: session.session, phone: "+15555550100", caller: caller) }
        assertReason(.invalidParams) { try service.changePhone(token: session.session, phone: "12", caller: caller) }
        clock.advance(seconds: service.settings.stepUpWindowSeconds + 1)
        assertReason(.stepUpRequired) { try service.changePhone(token: session.session, phone: "+15555550199", caller: caller) }
    }
}
