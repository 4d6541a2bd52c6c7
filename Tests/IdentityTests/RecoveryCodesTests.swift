import Foundation
import Secrets
import TestSupport
import XCTest

@testable import Identity

final class RecoveryCodesTests: IdentityTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try registerUser()
    }

    private var userID: String { get throws { try XCTUnwrap(try service.store.user(username: "alice")).userID } }

    func testTenDistinctCodesOnceForARecentStepUpOnly() throws {
        let weak = try login(device: "new-phone")
        assertIdentityError(.factorsOwed(["sms"])) { try service.recoveryCodes(token: weak.session, caller: caller) }
        let strong = try elevatedLogin()
        let codes = try service.recoveryCodes(token: strong.session, caller: caller)
        XCTAssertEqual(codes.count, 10)
        XCTAssertEqual(Set(codes).count, 10)
        for code in codes { XCTAssertNotNil(code.range(of: "^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$", options: .regularExpression), code) }
        XCTAssertEqual(try service.preferences(token: strong.session, smsVerification: nil, sitekey: nil, caller: caller).recoveryCodesLeft, 10)
        clock.advance(seconds: 601)
        assertReason(.stepUpRequired) { try service.recoveryCodes(token: strong.session, caller: caller) }
    }

    func testEveryCodeWorksOnceAndOnlyOnce() throws {
        let codes = try service.recoveryCodes(token: try elevatedLogin().session, caller: caller)
        for (index, code) in codes.enumerated() {
            let session = try login(device: "lost-phone-\(index)")
            XCTAssertEqual(session.requiredFactors, ["sms"])
            let passed = try service.recoveryVerify(token: session.session, code: code.uppercased(), caller: caller)
            XCTAssertEqual(passed.aal, 2)
            XCTAssertEqual(passed.remaining, codes.count - 1 - index)
            // Used up: refused again (a pass then clears the budget, so the loop never locks).
            let again = try login(device: "lost-phone-\(index)-again")
            assertReason(.invalidCode) { try service.recoveryVerify(token: again.session, code: code, caller: caller) }
        }
        let events = try service.store.events(userID: try userID, limit: 100, before: nil)
        XCTAssertEqual(events.filter { $0.event == "recovery_code.used" }.map(\.outcome).reversed(), (0..<10).reversed().map { "left_\($0)" })
    }

    func testABurstOfOneCodePassesOnce() throws {
        let code = try service.recoveryCodes(token: try elevatedLogin().session, caller: caller)[0]
        let sessions = try (0..<12).map { _ in try login(device: "burst").session }
        let passed = Counter()
        let (service, caller) = (self.service!, self.caller)
        DispatchQueue.concurrentPerform(iterations: sessions.count) { index in
            if (try? service.recoveryVerify(token: sessions[index], code: code, caller: caller)) != nil { passed.add() }
        }
        XCTAssertEqual(passed.value, 1)
        XCTAssertEqual(try service.store.recoveryCodesLeft(userID: try userID), 9)
    }

    func testANewSetReplacesTheOldOne() throws {
        let session = try elevatedLogin()
        let old = try service.recoveryCodes(token: session.session, caller: caller)
        let new = try service.recoveryCodes(token: session.session, caller: caller)
        XCTAssertTrue(Set(old).isDisjoint(with: new))
        assertIdentityError(.invalidCode(attemptsLeft: 2)) { try service.recoveryVerify(token: try login(device: "x").session, code: old[0], caller: caller) }
        XCTAssertEqual(try service.recoveryVerify(token: try login(device: "x").session, code: new[0], caller: caller).remaining, 9)
    }

    func testWrongCodesShareTheBudgetOfAuthenticatorCodes() throws {
        let codes = try service.recoveryCodes(token: try elevatedLogin().session, caller: caller)
        let session = try login(device: "thief")
        assertReason(.invalidParams) { try service.recoveryVerify(token: session.session, code: "not a code!", caller: caller) }
        for left in [2, 1, 0] {
            assertIdentityError(.invalidCode(attemptsLeft: left)) { try service.recoveryVerify(token: session.session, code: "00000-00000", caller: caller) }
        }
        assertIdentityError(.factorLocked(retryAfterSeconds: 30)) { try service.recoveryVerify(token: session.session, code: codes[0], caller: caller) }
        // one budget for both
        assertIdentityError(.factorLocked(retryAfterSeconds: 30)) {
            try service.totpVerify(token: session.session, code: "123456", caller: caller)
        }
        let events = try service.store.events(userID: try userID, limit: 100, before: nil)
        XCTAssertFalse(events.contains { $0.outcome.contains(codes[0]) })
    }

    func testCodesAreStoredOnlyAsKeyedHashes() throws {
        let codes = try service.recoveryCodes(token: try elevatedLogin().session, caller: caller)
        // What the store holds, on either backend: the rows themselves.
        let stored = try service.store.database.read { c in
            try c.query("SELECT code_hash FROM recovery_codes").map { try $0.blob("code_hash") }
        }
        XCTAssertEqual(stored.count, codes.count)
        for code in codes {
            let plain = RecoveryCodes.normalize(code)!
            for hash in stored {
                XCTAssertNil(Data(hash).range(of: Data(plain.utf8)))
                XCTAssertNotEqual(hash, SHA256.hash(plain), "keyed, not a bare hash")
            }
        }
    }
}

final class FactorBudgetTests: IdentityTestCase {
    /// A password thief spends the budget to its consecutive limit; the owner passing SMS on
    /// her phone gives her codes back (otherwise they would stay locked for good).
    func testAnotherFactorPassedGivesTheBudgetBack() throws {
        service = try makeService { $0.secondFactorThrottle = AccountThrottlePolicy(freeFailures: 2, maximumConsecutiveFailures: 2) }
        try registerUser()
        let codes = try service.recoveryCodes(token: try elevatedLogin().session, caller: caller)
        let thief = try login(device: "thief")
        for _ in 0..<2 { assertReason(.invalidCode) { try service.recoveryVerify(token: thief.session, code: "00000-00000", caller: caller) } }
        clock.advance(seconds: 3600)
        let owner = try login(device: "owner-new-phone")
        assertIdentityError(.factorLocked(retryAfterSeconds: 900)) { try service.recoveryVerify(token: owner.session, code: codes[0], caller: caller) }
        _ = try service.elevate(sessionID: try login().sessionID, factor: "sms", caller: caller)
        XCTAssertEqual(try service.recoveryVerify(token: owner.session, code: codes[0], caller: caller).aal, 2)
    }
}
