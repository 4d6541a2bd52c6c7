import LineProtocol
import Secrets
import TestSupport
import XCTest

@testable import Identity

final class RegistrationTests: IdentityTestCase {
    func testRegisterNormalisesAndStores() throws {
        let userID = try registerUser("Alice", email: " Alice@Example.COM", phone: "(555) 555-0100")
        XCTAssertTrue(userID.hasPrefix("usr_"))
        let user = try service.user(id: userID)
        XCTAssertEqual(user.username, "alice")
        XCTAssertEqual(user.email, "alice@example.com")
        XCTAssertEqual(user.phone, "+15555550100")
        XCTAssertFalse(user.smsVerification)
        XCTAssertTrue(user.passwordHash.hasPrefix("$scrypt$ln=10,r=8,p=1$"))
        XCTAssertEqual(try service.findByEmail("ALICE@example.com"), userID)
    }

    func testBadInputsAreRefusedBeforeAnythingIsStored() throws {
        let cases: [(String, String, String, String, Reason)] = [
            ("a", Self.password, "a@example.com", "5555550100", .invalidParams),
            ("bob", Self.password, "not-an-email", "5555550100", .invalidParams),
            ("bob", Self.password, "bob@example.com", "12", .invalidParams),
            ("bob", "short", "bob@example.com", "5555550100", .weakPassword),
            ("bob", "bob-is-great", "x@example.com", "5555550100", .weakPassword),
            ("bob", "hunter2hunter2", "x@example.com", "5555550100", .weakPassword),
        ]
        for (username, password, email, phone, reason) in cases {
            assertReason(reason) {
                try service.register(.init(username: username, password: password, email: email, phone: phone), caller: caller)
            }
        }
        assertReason(.notFound) { try service.findByEmail("bob@example.com") }
        assertReason(.notFound) { try service.findByEmail("x@example.com") }
    }
}

final class LoginTests: IdentityTestCase {
    func testLoginOnANewDeviceNeedsSMSAndAfterElevationTheDeviceIsTrusted() throws {
        try registerUser()
        let first = try login()
        XCTAssertEqual(first.aal, 1)
        XCTAssertEqual(first.requiredFactors, ["sms"])
        XCTAssertTrue(OpaqueToken.isWellFormed(first.session, prefix: "lks_"))
        XCTAssertEqual(try service.elevate(sessionID: first.sessionID, factor: "sms", caller: caller), 2)
        let introspected = try service.introspect(token: first.session)
        XCTAssertEqual(introspected.aal, 2)
        XCTAssertEqual(introspected.aal2At, clock.nowSeconds)
        XCTAssertEqual(try login(token: first.deviceToken).requiredFactors, [], "trusted device, SMS verification off")
        XCTAssertEqual(try login().requiredFactors, ["sms"], "the device id alone is no proof of the device")
        XCTAssertEqual(try login(device: "ipad-2").requiredFactors, ["sms"], "trust is per device")
    }

    func testSMSPreferenceAlwaysAsksForSMS() throws {
        try registerUser()
        let session = try elevatedLogin().session
        XCTAssertEqual(try service.preferences(token: session, smsVerification: true, sitekey: nil, caller: caller).smsVerification, true)
        XCTAssertEqual(try login().requiredFactors, ["sms"])
    }

    func testWrongPasswordAndUnknownUserGetTheSameAnswer() throws {
        try registerUser()
        let wrong = assertReason(.invalidCredentials) { try login(password: "not the password") }
        let unknown = assertReason(.invalidCredentials) { try login("nobody", password: "not the password") }
        let malformed = assertReason(.invalidCredentials) { try login("x", password: "not the password") }
        XCTAssertEqual(wrong, unknown)
        XCTAssertEqual(wrong, malformed)
    }

    /// Unknown users cost the same work as known ones: one scrypt verification each, against a
    /// dummy hash made with the configured cost (work is counted here; time is for `latchkey bench`).
    func testUnknownUsersDoTheSameScryptWorkAsKnownOnes() throws {
        service = try makeService { $0.scrypt = ScryptParameters(logN: 12, r: 8, p: 1); $0.clientBurst = 1000; $0.accountThrottle = AccountThrottlePolicy(freeFailures: 1000, maximumConsecutiveFailures: 1000) }
        try registerUser()
        XCTAssertTrue(service.dummyHash.hasPrefix("$scrypt$ln=12,r=8,p=1$"), "the dummy hash costs what a real one does")
        // (A malformed name like "x" is refused before hashing: it cannot name an account, so it tells nothing.)
        for username in ["alice", "nobody"] {
            let before = service.passwordChecks
            _ = try? login(username, password: "wrong password", device: "d")
            XCTAssertEqual(service.passwordChecks - before, 1, "\(username): one verification")
        }
    }

    func testPasswordIsRehashedWhenTheCostRises() throws {
        let userID = try registerUser()
        service = try makeService { $0.scrypt = ScryptParameters(logN: 11, r: 8, p: 1) }
        XCTAssertTrue(try service.user(id: userID).passwordHash.hasPrefix("$scrypt$ln=10,"))
        _ = try login()
        XCTAssertTrue(try service.user(id: userID).passwordHash.hasPrefix("$scrypt$ln=11,"))
        XCTAssertNoThrow(try login())
    }

    func testPasswordsAreComparedInNFKC() throws {
        let composed = "caf\u{E9} au lait tous les jours"
        let decomposed = "cafe\u{301} au lait tous les jours"
        _ = try service.register(.init(username: "zoe", password: composed, email: "zoe@example.com", phone: "5555550100"), caller: caller)
        XCTAssertEqual(try login("zoe", password: decomposed).aal, 1)
        assertReason(.weakPassword) { try service.checkPassword(userID: "usr_x", password: "\u{FB01}\u{FB01}\u{FB01}\u{FB01}") }
    }

    func testOldAuditEventsAreDroppedAtLogin() throws {
        service = try makeService { $0.auditRetentionSeconds = 86_400 }
        try registerUser()
        _ = try? login(password: "wrong wrong wrong")
        clock.advance(seconds: 86_401)
        let userID = try service.introspect(token: try login().session).userID
        let events = try service.store.events(userID: userID, limit: 100, before: nil).map(\.event)
        XCTAssertEqual(events, ["session.created", "login.succeeded"])
    }

    func testLoginReturnsTheSitekey() throws {
        try registerUser()
        let session = try elevatedLogin().session
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3]
        _ = try service.preferences(token: session, smsVerification: nil, sitekey: .some(png), caller: caller)
        XCTAssertEqual(try login().sitekey, png)
        _ = try service.preferences(token: session, smsVerification: nil, sitekey: .some(nil), caller: caller)
        XCTAssertNil(try login().sitekey)
    }
}

final class SessionLifecycleTests: IdentityTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        service = try makeService { $0.sessionLifetimeSeconds = 3600; $0.sessionIdleSeconds = 600; $0.lastSeenGranularitySeconds = 15 }
        try registerUser()
    }

    func testIdleSessionsEndUnlessUsed() throws {
        let session = try login().session
        clock.advance(seconds: 590)
        XCTAssertNoThrow(try service.introspect(token: session))
        clock.advance(seconds: 590)
        XCTAssertNoThrow(try service.introspect(token: session), "use refreshes the idle timer")
        clock.advance(seconds: 600)
        assertIdentityError(.unauthenticated) { try service.introspect(token: session) }
    }

    func testAbsoluteLifetimeEndsEvenActiveSessions() throws {
        let session = try login().session
        let expiresAt = try service.introspect(token: session).expiresAt
        XCTAssertEqual(expiresAt, clock.nowSeconds + 3600)
        for _ in 0..<7 {
            clock.advance(seconds: 500)
            _ = try? service.introspect(token: session)
        }
        clock.advance(seconds: 100)
        assertIdentityError(.unauthenticated) { try service.introspect(token: session) }
    }

    func testUnknownMalformedAndRevokedTokensAllAnswerUnauthenticated() throws {
        let session = try login().session
        for token in ["", "lks_", "garbage", "lkr_" + session.dropFirst(4), OpaqueToken.make(prefix: "lks_")] {
            assertIdentityError(.unauthenticated) { try service.introspect(token: token) }
        }
        try service.logout(token: session, caller: caller)
        assertIdentityError(.unauthenticated) { try service.introspect(token: session) }
        assertIdentityError(.unauthenticated) { try service.logout(token: session, caller: caller) }
    }

    func testListAndRevokeSessions() throws {
        let phone = try elevatedLogin(device: "iphone-1")
        let tablet = try login(device: "ipad-1")
        let (current, _, all) = try service.sessions(token: phone.session)
        XCTAssertEqual(current.sessionID, phone.sessionID)
        XCTAssertEqual(Set(all.map(\.sessionID)), [phone.sessionID, tablet.sessionID])
        XCTAssertEqual(Set(all.map(\.deviceID)), ["iphone-1", "ipad-1"])
        try service.revoke(token: phone.session, sessionID: tablet.sessionID, caller: caller)
        assertIdentityError(.unauthenticated) { try service.introspect(token: tablet.session) }
        assertReason(.notFound) { try service.revoke(token: phone.session, sessionID: tablet.sessionID, caller: caller) }
        XCTAssertEqual(try service.sessions(token: phone.session).all.map(\.sessionID), [phone.sessionID])
    }

    func testIdleAndExpiredSessionsAreNotListed() throws {
        let stale = try login(device: "old-phone")
        clock.advance(seconds: 601)
        let fresh = try login(device: "new-phone")
        XCTAssertEqual(try service.sessions(token: fresh.session).all.map(\.sessionID), [fresh.sessionID])
        assertIdentityError(.unauthenticated) { try service.introspect(token: stale.session) }
    }

    func testUsersCannotRevokeOthersSessions() throws {
        try registerUser("bob")
        let alice = try elevatedLogin()
        let bob = try login("bob")
        assertReason(.notFound) { try service.revoke(token: alice.session, sessionID: bob.sessionID, caller: caller) }
        XCTAssertNoThrow(try service.introspect(token: bob.session))
    }

    func testRevokeAllEndsEverySessionOfTheUser() throws {
        let one = try login(device: "a")
        let two = try login(device: "b")
        let userID = try service.introspect(token: one.session).userID
        XCTAssertEqual(try service.revokeAll(userID: userID, caller: caller), 2)
        assertIdentityError(.unauthenticated) { try service.introspect(token: one.session) }
        assertIdentityError(.unauthenticated) { try service.introspect(token: two.session) }
        XCTAssertEqual(try service.revokeAll(userID: userID, caller: caller), 0)
    }

    func testElevateRefusesUnknownRevokedAndExpiredSessions() throws {
        let session = try login()
        assertReason(.notFound) { try service.elevate(sessionID: "ses_nope", factor: "sms", caller: caller) }
        assertReason(.invalidParams) { try service.elevate(sessionID: session.sessionID, factor: "carrier-pigeon", caller: caller) }
        try service.logout(token: session.session, caller: caller)
        assertReason(.notFound) { try service.elevate(sessionID: session.sessionID, factor: "sms", caller: caller) }
        let idle = try login()
        clock.advance(seconds: 601)
        assertReason(.notFound) { try service.elevate(sessionID: idle.sessionID, factor: "sms", caller: caller) }
        let other = try login()
        for _ in 0..<8 {
            clock.advance(seconds: 500)
            _ = try? service.introspect(token: other.session)
        }
        assertReason(.notFound) { try service.elevate(sessionID: other.sessionID, factor: "sms", caller: caller) }
    }

    func testTokensAreStoredOnlyAsHashes() throws {
        let session = try login().session
        let rows = try service.store.database.read { c in try c.query("SELECT * FROM sessions") }
        for row in rows {
            for value in row.values {
                if case .text(let text) = value { XCTAssertFalse(text.contains(session.dropFirst(4))) }
            }
            XCTAssertEqual(try row.blob("token_hash"), OpaqueToken.hash(session))
        }
    }
}

final class PreferencesAndPasswordTests: IdentityTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try registerUser()
    }

    func testTurningSecurityOffOrChangingTheSitekeyNeedsARecentStepUp() throws {
        _ = try elevatedLogin()
        // A password on the now trusted device, SMS verification off: aal 1 that owes nothing.
        let weak = try appLogin().session
        XCTAssertEqual(try service.preferences(token: weak, smsVerification: nil, sitekey: nil, caller: caller), Preferences(smsVerification: false, sitekey: nil, factors: ["sms"], email: "alice@example.com"))
        XCTAssertTrue(try service.preferences(token: weak, smsVerification: true, sitekey: nil, caller: caller).smsVerification)
        // SMS verification is on now: the same session owes it.
        assertIdentityError(.factorsOwed(["sms"])) {
            try service.preferences(token: weak, smsVerification: false, sitekey: nil, caller: caller)
        }
        let strong = try elevatedLogin().session
        XCTAssertFalse(try service.preferences(token: strong, smsVerification: false, sitekey: nil, caller: caller).smsVerification)
        let settled = try appLogin().session
        assertIdentityError(.recentStepUpRequired(windowSeconds: 600)) { try service.preferences(token: settled, smsVerification: nil, sitekey: .some([0xFF, 0xD8, 0xFF, 0]), caller: caller) }
        clock.advance(seconds: 601)
        assertIdentityError(.recentStepUpRequired(windowSeconds: 600)) { try service.preferences(token: strong, smsVerification: nil, sitekey: .some([0xFF, 0xD8, 0xFF, 0]), caller: caller) }
        _ = try service.elevate(sessionID: try service.introspect(token: strong).sessionID, factor: "sms", caller: caller)
        XCTAssertEqual(try service.preferences(token: strong, smsVerification: nil, sitekey: .some([0xFF, 0xD8, 0xFF, 0]), caller: caller).sitekey, [0xFF, 0xD8, 0xFF, 0])
        XCTAssertFalse(try service.preferences(token: strong, smsVerification: false, sitekey: nil, caller: caller).smsVerification)
    }

    func testSitekeyMustBeASmallImage() throws {
        let strong = try elevatedLogin().session
        assertReason(.invalidParams) { try service.preferences(token: strong, smsVerification: nil, sitekey: .some(Array("hello".utf8)), caller: caller) }
        let huge = [0x89, 0x50, 0x4E, 0x47] + [UInt8](repeating: 0, count: 16 * 1024)
        assertReason(.invalidParams) { try service.preferences(token: strong, smsVerification: nil, sitekey: .some(huge), caller: caller) }
        let gif = Array("GIF89a".utf8) + [1, 2, 3]
        XCTAssertEqual(try service.preferences(token: strong, smsVerification: nil, sitekey: .some(gif), caller: caller).sitekey, gif)
    }

    func testCheckAndSetPassword() throws {
        let userID = try service.findByEmail("alice@example.com")
        assertReason(.weakPassword) { try service.checkPassword(userID: userID, password: "alice-in-wonderland") }
        XCTAssertNoThrow(try service.checkPassword(userID: userID, password: "a brand new phrase"))
        XCTAssertNoThrow(try service.checkPassword(userID: "usr_unknown", password: "a brand new phrase"))
        assertReason(.notFound) { try service.setPassword(userID: "usr_unknown", password: "a brand new phrase", caller: caller) }
        assertReason(.weakPassword) { try service.setPassword(userID: userID, password: "1234567", caller: caller) }
        try service.setPassword(userID: userID, password: "a brand new phrase", caller: caller)
        assertReason(.invalidCredentials) { try login() }
        XCTAssertNoThrow(try login(password: "a brand new phrase"))
    }

    func testActivityPagesNewestFirstAndHoldsNoSecrets() throws {
        let session = try elevatedLogin().session
        _ = try? login(password: "wrong wrong wrong")
        let userID = try service.introspect(token: session).userID
        try service.record(userID: userID, event: "factor.failed", outcome: "invalid_code", deviceID: "iphone-1", caller: caller)
        assertReason(.invalidParams) { try service.record(userID: userID, event: "Bad Event!", outcome: "x", deviceID: nil, caller: caller) }
        assertReason(.notFound) { try service.record(userID: "usr_x", event: "factor.failed", outcome: "x", deviceID: nil, caller: caller) }
        let first = try service.activity(token: session, limit: 2, before: nil)
        XCTAssertEqual(first.events.map(\.event), ["factor.failed", "login.failed"])
        XCTAssertEqual(first.events.first?.client, "203.0.113.7")
        let next = try XCTUnwrap(first.next)
        let second = try service.activity(token: session, limit: 10, before: next)
        XCTAssertEqual(second.events.map(\.event), ["session.elevated", "session.created", "login.succeeded", "email.verification_sent", "user.registered"])
        XCTAssertNil(second.next)
        let text = "\(first) \(second)"
        XCTAssertFalse(text.contains(Self.password))
        XCTAssertFalse(text.contains("wrong wrong"))
    }
}
