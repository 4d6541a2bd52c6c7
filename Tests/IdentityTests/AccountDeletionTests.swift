import Contract
import Delivery
import Foundation
import LineProtocol
import Secrets
import TestSupport
import XCTest

@testable import Identity

/// Identity's side of a deletion: the record, the erasure when accounts has closed, the
/// followers' reports, the last mail. The followers themselves are played by direct reports.
final class AccountDeletionTests: AccountLifeTestCase {
    private func requestDeletion(_ session: LoginResult, password: String = IdentityTestCase.password) throws -> DeletionRecord {
        try service.requestDeletion(token: session.session, password: password, caller: caller)
    }

    private func report(_ follower: String, _ userID: String) throws -> DeletionRecord {
        try service.erasureReported(service: follower, userID: userID, refusal: nil)
    }

    func testItNeedsARecentStepUpAndThePasswordWhoseFailuresCountOnTheLoginBudget() throws {
        try registerUser()
        let owing = try login(device: "new-phone")
        assertReason(.stepUpRequired) { try requestDeletion(owing) }
        let session = try elevatedLogin()
        for _ in 0..<service.settings.accountThrottle.freeFailures {
            assertReason(.invalidCredentials) { try requestDeletion(session, password: "not the password") }
        }
        assertReason(.locked) { try requestDeletion(session, password: "not the password") }
        assertReason(.locked) { try login(device: "laptop") }
        XCTAssertEqual(try service.store.unfinishedDeletions(limit: 10), [], "nothing was recorded")
    }

    func testNothingIsErasedUntilAccountsHasClosedAndThenEverythingIsInOneStep() throws {
        let userID = try registerUser()
        let session = try elevatedLogin()
        let recorded = try requestDeletion(session)
        XCTAssertEqual(recorded.state, .closingAccounts)
        XCTAssertTrue(recorded.pseudonym.hasPrefix("del_"))
        XCTAssertEqual(try service.erasuresDue(service: "accounts", limit: 10).map(\.userID), [userID])
        XCTAssertEqual(try service.erasuresDue(service: "verification", limit: 10), [], "verification waits for accounts")
        XCTAssertNoThrow(try service.introspect(token: session.session), "still signed in while accounts decides")

        let erasing = try report("accounts", userID)
        XCTAssertEqual(erasing.state, .erasing)
        assertReason(.unauthenticated) { try service.introspect(token: session.session) }
        XCTAssertNil(try service.store.user(id: userID))
        XCTAssertEqual(try service.store.events(userID: userID, limit: 10, before: nil), [], "the activity went too")
        assertReason(.invalidCredentials) { try login() }
        XCTAssertEqual(try service.erasuresDue(service: "accounts", limit: 10), [])
        XCTAssertEqual(try service.erasuresDue(service: "verification", limit: 10).map(\.phone), ["+15555550100"])
        XCTAssertEqual(try report("accounts", userID).state, .erasing, "a repeated report changes nothing")

        // The username and the address are free again, as for a user that never existed.
        XCTAssertNotEqual(try registerUser(), userID)
    }

    func testARefusalBlocksTheDeletionUntilTheOperatorResumesIt() throws {
        let userID = try registerUser()
        let session = try elevatedLogin()
        _ = try requestDeletion(session)
        let balances: JSON = [["name": "checking", "balance": 500, "currency": "USD"]]
        let blocked = try service.erasureReported(service: "accounts", userID: userID, refusal: ("balance_not_zero", balances))
        XCTAssertEqual(blocked.state, .blocked)
        XCTAssertEqual(blocked.detail, "balance_not_zero")
        XCTAssertEqual(blocked.balances, Optional(balances))
        XCTAssertNoThrow(try service.introspect(token: session.session), "a blocked deletion erased nothing")
        XCTAssertEqual(try service.erasuresDue(service: "accounts", limit: 10), [], "not asked again by itself")
        XCTAssertEqual(try requestDeletion(session).state, .blocked, "asking again shows the same deletion")

        XCTAssertEqual(try service.resumeDeletion(userID: userID).state, .closingAccounts)
        XCTAssertEqual(try service.erasuresDue(service: "accounts", limit: 10).map(\.userID), [userID])
        XCTAssertEqual(try report("accounts", userID).state, .erasing)
        assertIdentityError(.notFound("no deletion of this user")) { try service.resumeDeletion(userID: "usr_nobody") }
    }

    func testTheLastMailGoesOnceWhenEveryServiceIsDoneAndTheRecordForgetsTheAddress() throws {
        let userID = try registerUser()
        _ = try requestDeletion(try elevatedLogin())
        _ = try report("accounts", userID)
        XCTAssertEqual(try report("verification", userID).state, .erasing)
        XCTAssertEqual(try service.erasuresDue(service: "verification", limit: 10), [])
        XCTAssertEqual(try service.erasuresDue(service: "reset", limit: 10).map(\.email), ["alice@example.com"])
        XCTAssertEqual(try report("reset", userID).state, .mailing)

        let record = try XCTUnwrap(service.store.deletion(userID: userID))
        XCTAssertEqual(record.state, .deleted)
        XCTAssertNil(record.email)
        XCTAssertNil(record.phone)
        XCTAssertEqual(record.finishedAt, clock.nowSeconds)
        service.sendLastMails()
        XCTAssertEqual(mailed(to: "alice@example.com", "account was deleted").count, 1)
        let last = try XCTUnwrap(mailed(to: "alice@example.com", "account was deleted").first)
        XCTAssertNotNil(last.html)
        XCTAssertNil(last.text.firstMatch(of: /lk[a-z]_/), "no token in it")
        XCTAssertEqual(try service.store.unfinishedDeletions(limit: 10), [])
    }

    func testAClaimedLastMailIsSentAgainOnlyOnceItsClaimRunsOut() throws {
        let userID = try registerUser()
        _ = try requestDeletion(try elevatedLogin())
        for follower in ["accounts", "verification"] { _ = try report(follower, userID) }
        // A sender that stopped right after its claim: its record stays `mailing`.
        let claimed = try service.store.claimLastMails(now: clock.nowSeconds, leaseUntil: clock.nowSeconds + 60, limit: 10)
        XCTAssertEqual(claimed, [])
        _ = try service.store.followerErased(userID: userID, service: "reset", now: clock.nowSeconds)
        XCTAssertEqual(try service.store.claimLastMails(now: clock.nowSeconds, leaseUntil: clock.nowSeconds + 60, limit: 10).map(\.userID), [userID])
        service.sendLastMails()
        XCTAssertEqual(mailed(to: "alice@example.com", "account was deleted").count, 0, "claimed by the stopped sender")
        clock.advance(seconds: 61)
        service.sendLastMails()
        service.sendLastMails()
        XCTAssertEqual(mailed(to: "alice@example.com", "account was deleted").count, 1)
        XCTAssertEqual(try service.store.deletion(userID: userID)?.state, .deleted)
    }

    func testTwentyParallelRequestsRecordOneDeletion() throws {
        let userID = try registerUser()
        let session = try elevatedLogin()
        let pseudonyms = SharedList<String>()
        let refusals = Tally()
        let (service, caller) = (service!, caller)
        DispatchQueue.concurrentPerform(iterations: 20) { _ in
            do {
                pseudonyms.append(try service.requestDeletion(token: session.session, password: IdentityTestCase.password, caller: caller).pseudonym)
            } catch let error as IdentityError {
                refusals.record(error.rpcError.reasonText ?? "no reason")
            } catch {
                refusals.record("unexpected: \(error)")
            }
        }
        XCTAssertGreaterThan(pseudonyms.all.count, 0)
        XCTAssertEqual(Set(pseudonyms.all).count, 1, "every twin that got through was answered the one record")
        XCTAssertEqual(Set(refusals.counts.keys).subtracting(["locked"]), [], "the others found the password's budget reserved by their twins: \(refusals.counts)")
        XCTAssertEqual(try service.store.unfinishedDeletions(limit: 100).map(\.userID), [userID])
    }

    func testTheOperatorViewNamesNeitherTheAddressNorTheNumber() throws {
        let userID = try registerUser()
        _ = try requestDeletion(try elevatedLogin())
        let view = try XCTUnwrap(service.store.deletion(userID: userID)).operatorJSON
        let text = String(decoding: view.encoded(), as: UTF8.self)
        XCTAssertFalse(text.contains("alice@example.com"))
        XCTAssertFalse(text.contains("5555550100"))
        XCTAssertEqual(view["waiting_for"], ["accounts", "verification", "reset"])
    }
}
