import Delivery
import Dispatch
import Foundation
import LineProtocol
import Platform
@testable import Reset
import RPC
import Runtime
import Secrets
import Storage
import TestSupport
import XCTest


final class ResetRequestTests: ResetTestCase {
    func testKnownAndUnknownAddressesGetTheSameAnswerWithoutWaitingForTheLookup() throws {
        // A slow identity must not show in the answer: the lookup runs after it.
        identity.checkDelayMicroseconds = 0
        let router = Router(workers: makePool(threads: 2, name: "router"), metrics: Metrics())
        service.register(on: router)
        var answers: [Result<JSON, RPCError>] = []
        for email in ["alice@example.com", "nobody@example.com", "ALICE@example.com ", "ghost@example.org"] {
            answers.append(dispatch(router, "reset.request", ["email": .string(email)]))
        }
        for answer in answers { XCTAssertEqual(try answer.get(), ["ok": true]) }
        // Every answer is queue-and-return: all four were given before identity was asked anything.
        XCTAssertEqual(identity.callCount("identity.find_by_email"), 0, "no answer waited for the lookup")
        runJobs()
        XCTAssertEqual(mail.sent.count, 1, "only the known address gets a mail")
        XCTAssertEqual(mail.sent.first?.to, "alice@example.com")
        XCTAssertEqual(identity.callCount("identity.find_by_email"), 3, "alice twice, but the second is rate limited before the lookup")
    }

    func testTheAnswerDoesNotDependOnIdentityBeingSlowOrDown() throws {
        identity.failing = ["identity.find_by_email"]
        let router = Router(workers: makePool(threads: 1, name: "router"), metrics: Metrics())
        service.register(on: router)
        XCTAssertEqual(try dispatch(router, "reset.request", ["email": "alice@example.com"]).get(), ["ok": true])
        runJobs()
        XCTAssertEqual(mail.sent.count, 0)
        XCTAssertEqual(metrics.counter("reset.job_retried"), 1, "identity down: the job waits for another try")
        identity.failing = []
        clock.advance(seconds: 1)
        runJobs()
        XCTAssertEqual(mail.sent.count, 1, "the promised mail goes out once identity is back")
    }

    func testMalformedAddressIsInvalidParamsForEveryone() {
        // Registration's own rule: an address no account can have (a double dot, a domain label
        // outside a-z 0-9 -) is refused, never answered as if it might have one.
        let registrationRefuses = ["us..er@example.com", ".user@example.com", "user@exa_mple.com", "user@-example.com", "élan@example.com"]
        for bad in ["", "no-at-sign", "a@b", "two@@example.com", "spa ce@example.com", "x@example.com\r\nBcc: y@example.com"] + registrationRefuses {
            XCTAssertThrowsError(try service.request(email: bad, context: context()), bad) { error in
                XCTAssertEqual((error as? RPCError)?.reason, .invalidParams)
            }
        }
    }

    func testKnownAddressGetsOneSingleUseTokenStoredOnlyAsItsHash() throws {
        requestNow("Alice@Example.com")
        XCTAssertEqual(mail.sent.count, 1)
        let token = try lastToken()
        XCTAssertTrue(OpaqueToken.isWellFormed(token, prefix: "lkr_"), token)
        let rows = try store.database.read { c in try c.query("SELECT * FROM reset_tokens") }
        XCTAssertEqual(rows.count, 1)
        let row = try XCTUnwrap(rows.first)
        XCTAssertEqual(try row.blob("token_hash"), SHA256.hash(token))
        XCTAssertEqual(try row.string("user_id"), "u_alice")
        XCTAssertEqual(try row.int("expires_at_ms") - row.int("created_at_ms"), 30 * 60 * 1000)
        for value in row.values {
            if case .text(let text) = value { XCTAssertFalse(text.contains(token.dropFirst(4))) }
        }
        XCTAssertEqual(metrics.counter("reset.issued"), 1)
    }

    func testTheMailGoesToTheAddressOnFileNotTheOneTyped() throws {
        identity.add(userID: "u_dave", email: "Dave.Smith@Example.com", password: "dave password 1234")
        requestNow("  DAVE.smith@example.COM ")
        XCTAssertEqual(mail.sent.map(\.to), ["Dave.Smith@Example.com"])
    }

    func testUnknownAddressGetsNothingByDefaultAndANoticeWhenTurnedOn() throws {
        requestNow("nobody@example.com")
        XCTAssertEqual(mail.sent.count, 0)
        var settings = ResetSettings()
        settings.notifyUnknownAddresses = true
        try makeService(settings)
        requestNow("other@example.com")
        XCTAssertEqual(mail.sent.count, 1)
        let notice = try XCTUnwrap(mail.sent.first)
        XCTAssertEqual(notice.to, "other@example.com")
        XCTAssertFalse(notice.text.contains("token="))
        XCTAssertTrue(notice.text.contains("no account uses it"))
    }

    func testANewRequestSupersedesTheLiveToken() throws {
        requestNow("alice@example.com")
        let first = try lastToken()
        clock.advance(seconds: 61)
        requestNow("alice@example.com")
        let second = try lastToken()
        XCTAssertNotEqual(first, second)
        XCTAssertThrowsError(try service.validate(token: first)) { XCTAssertEqual($0 as? ResetError, .invalidToken) }
        XCTAssertNoThrow(try service.validate(token: second))
    }

    func testPerAddressLimitOnePerMinute() throws {
        requestNow("alice@example.com")
        clock.advance(seconds: 30)
        requestNow("alice@example.com")
        XCTAssertEqual(mail.sent.count, 1, "second request within 60 s sends nothing")
        XCTAssertEqual(metrics.counter("reset.refused"), 1)
        clock.advance(seconds: 31)
        requestNow("alice@example.com")
        XCTAssertEqual(mail.sent.count, 2)
    }

    func testPerAddressLimitFiveAnHour() throws {
        for _ in 0..<8 {
            requestNow("alice@example.com")
            clock.advance(seconds: 61)
        }
        XCTAssertEqual(mail.sent.count, 5)
        XCTAssertEqual(metrics.counter("reset.refused"), 3)
        clock.advance(seconds: 3600)
        requestNow("alice@example.com")
        XCTAssertEqual(mail.sent.count, 6, "the hour passed")
    }

    func testUnknownAddressesAreLimitedLikeKnownOnes() throws {
        // The limit is applied before the lookup: refusals look the same for both.
        requestNow("nobody@example.com")
        requestNow("nobody@example.com")
        XCTAssertEqual(metrics.counter("reset.refused"), 1)
        XCTAssertEqual(identity.callCount("identity.find_by_email"), 1)
    }

    func testPerClientBudgetAcrossAddresses() throws {
        var settings = ResetSettings()
        settings.clientPerHour = 3
        try makeService(settings)
        identity.add(userID: "u_bob", email: "bob@example.com", password: "bob password 1234")
        for index in 0..<5 { requestNow("someone\(index)@example.com", client: "203.0.113.9") }
        XCTAssertEqual(metrics.counter("reset.refused"), 2)
        requestNow("bob@example.com", client: "203.0.113.9")
        XCTAssertEqual(mail.sent.count, 0, "the client spent its budget")
        requestNow("bob@example.com", client: "203.0.113.10")
        XCTAssertEqual(mail.sent.count, 1, "another client still can")
    }

    func testRefusalsAreLoggedWithoutTheAddress() throws {
        requestNow("alice@example.com")
        requestNow("alice@example.com")
        let text = logs.capturedText
        XCTAssertTrue(text.contains("refused by rate limit"))
        XCTAssertFalse(text.contains("alice@example.com"))
    }

    func testTheTokenNeverReachesALog() throws {
        requestNow("alice@example.com")
        let token = try lastToken()
        try service.complete(token: token, password: "a much better password", context: context())
        runJobs()
        let text = logs.capturedText
        XCTAssertFalse(text.isEmpty)
        XCTAssertFalse(text.contains(String(token.dropFirst(4))), "token in the log")
        XCTAssertFalse(text.contains(Hex.encode(SHA256.hash(token))), "token hash in the log")
        XCTAssertTrue(text.contains("reset.token_ref"))
    }

    func testAFullQueueStillAnswersOk() throws {
        var settings = ResetSettings()
        settings.maxQueuedJobs = 1
        try makeService(settings)
        XCTAssertNoThrow(try service.request(email: "alice@example.com", context: context()))
        XCTAssertNoThrow(try service.request(email: "bob@example.com", context: context()))
        XCTAssertEqual(metrics.counter("reset.dropped"), 1)
        runJobs()
        XCTAssertEqual(mail.sent.count, 1)
    }
}

final class ResetValidateCompleteTests: ResetTestCase {
    func testValidateAnswersExpiryForALiveToken() throws {
        requestNow("alice@example.com")
        let expiresAt = try service.validate(token: try lastToken())
        XCTAssertEqual(expiresAt, clock.nowMilliseconds() / 1000 + 1800)
    }

    func testUnknownMalformedExpiredAndUsedTokensAreAllInvalidToken() throws {
        requestNow("alice@example.com")
        let token = try lastToken()
        let unknown = OpaqueToken.make(prefix: "lkr_")
        for bad in [unknown, "lkr_short", "", "lks_" + token.dropFirst(4), token + "x"] {
            XCTAssertThrowsError(try service.validate(token: bad)) { XCTAssertEqual($0 as? ResetError, .invalidToken) }
        }
        clock.advance(seconds: 1801)
        XCTAssertThrowsError(try service.validate(token: token)) { XCTAssertEqual($0 as? ResetError, .invalidToken) }
        XCTAssertThrowsError(try service.complete(token: token, password: "a much better password", context: context())) {
            XCTAssertEqual($0 as? ResetError, .invalidToken)
        }
        XCTAssertEqual(identity.callCount("identity.set_password"), 0)
    }

    func testExpiryFollowsTheConfiguredLifetime() throws {
        var settings = ResetSettings()
        settings.tokenTTLSeconds = 300
        try makeService(settings)
        requestNow("alice@example.com")
        let token = try lastToken()
        XCTAssertTrue(mail.sent[0].text.contains("expires in 5 minutes"))
        clock.advance(seconds: 299)
        XCTAssertNoThrow(try service.validate(token: token))
        clock.advance(seconds: 1)
        XCTAssertThrowsError(try service.validate(token: token))
    }

    func testCompleteSetsThePasswordEndsEverySessionRecordsAndMails() throws {
        requestNow("alice@example.com")
        let token = try lastToken()
        try service.complete(token: token, password: "correct horse battery", context: context())
        runJobs()
        XCTAssertEqual(identity.user("u_alice")?.password, "correct horse battery")
        XCTAssertEqual(identity.user("u_alice")?.sessions, 0)
        XCTAssertEqual(identity.events, ["u_alice password.reset success"])
        XCTAssertEqual(mail.sent.count, 2)
        XCTAssertEqual(mail.sent[1].subject, "Your Latchkey password was changed")
        XCTAssertEqual(mail.sent[1].to, "alice@example.com")
        // Single use.
        XCTAssertThrowsError(try service.validate(token: token)) { XCTAssertEqual($0 as? ResetError, .invalidToken) }
        XCTAssertThrowsError(try service.complete(token: token, password: "another good password", context: context())) {
            XCTAssertEqual($0 as? ResetError, .invalidToken)
        }
        XCTAssertEqual(identity.user("u_alice")?.password, "correct horse battery")
        XCTAssertEqual(metrics.counter("reset.completed"), 1)
    }

    func testWeakPasswordNamesTheRuleAndKeepsTheTokenUsable() throws {
        requestNow("alice@example.com")
        let token = try lastToken()
        XCTAssertThrowsError(try service.complete(token: token, password: "short", context: context())) { error in
            XCTAssertEqual(error as? ResetError, .weakPassword(rule: "too_short", message: "password must have at least 12 characters"))
            XCTAssertEqual((error as? ResetError)?.rpcError.data?["rule"], "too_short")
            XCTAssertEqual((error as? ResetError)?.rpcError.reason, .weakPassword)
        }
        XCTAssertEqual(identity.user("u_alice")?.sessions, 2, "nothing happened")
        XCTAssertNoThrow(try service.validate(token: token))
        XCTAssertNoThrow(try service.complete(token: token, password: "long enough password", context: context()))
    }

    func testTwoConcurrentCompletesExactlyOneWins() throws {
        identity.checkDelayMicroseconds = 20_000
        for round in 0..<5 {
            runJobs()  // the last round's "password changed" mail goes out after its answer
            clock.advance(seconds: 3600)
            requestNow("alice@example.com")
            let token = try lastToken()
            let outcomes = SharedList<String>()
            let service = self.service!
            let context = self.context()
            DispatchQueue.concurrentPerform(iterations: 4) { index in
                do {
                    try service.complete(token: token, password: "new password number \(index)", context: context)
                    outcomes.append("ok")
                } catch {
                    outcomes.append(String(describing: error))
                }
            }
            XCTAssertEqual(outcomes.all.filter { $0 == "ok" }.count, 1, "round \(round): \(outcomes.all)")
            XCTAssertEqual(outcomes.all.filter { $0 == "invalidToken" }.count, 3, "round \(round): \(outcomes.all)")
        }
        XCTAssertEqual(identity.callCount("identity.set_password"), 5)
    }

    func testIdentityFailureAfterTheClaimLeavesTheTokenUsable() throws {
        requestNow("alice@example.com")
        let token = try lastToken()
        identity.failing = ["identity.revoke_all"]
        XCTAssertThrowsError(try service.complete(token: token, password: "a much better password", context: context())) {
            XCTAssertEqual($0 as? ResetError, .unavailable)
        }
        identity.failing = []
        XCTAssertNoThrow(try service.complete(token: token, password: "a much better password", context: context()))
        XCTAssertEqual(identity.user("u_alice")?.sessions, 0)
    }

    func testCompletingEndsTheUsersOtherLiveTokens() throws {
        requestNow("alice@example.com")
        let first = try lastToken()
        // A token issued directly (as if a second mail crossed the first): both live.
        let second = OpaqueToken.make(prefix: "lkr_")
        _ = try store.database.write { c in
            try c.run("INSERT INTO reset_tokens (token_hash, user_id, created_at_ms, expires_at_ms) VALUES (?, 'u_alice', ?, ?)",
                [.blob(SHA256.hash(second)), .integer(clock.nowMilliseconds()), .integer(clock.nowMilliseconds() + 60_000)])
        }
        try service.complete(token: first, password: "a much better password", context: context())
        XCTAssertThrowsError(try service.validate(token: second))
    }

    /// A misspelt name (`pasword`) was ignored and the call went on without it.
    func testEachMethodRefusesANameItDoesNotTakeBeforeAnyWork() throws {
        requestNow("alice@example.com")
        let token = try lastToken()
        let router = Router(workers: makePool(threads: 1, name: "router"), metrics: Metrics())
        service.register(on: router)
        let cases: [(String, [String: JSON], String)] = [
            ("reset.request", ["email": "alice@example.com", "locale": "fr"], "locale"),
            ("reset.validate", ["token": .string(token), "tokn": "x"], "tokn"),
            ("reset.complete", ["token": .string(token), "password": "strong enough now", "pasword": "x"], "pasword"),
        ]
        for (method, params, field) in cases {
            let refused = dispatch(router, method, .object(params)).failure
            XCTAssertEqual(refused?.reason, .invalidParams, method)
            XCTAssertEqual(refused?.data?["field"]?.stringValue, field, method)
        }
        XCTAssertEqual(try dispatch(router, "reset.validate", ["token": .string(token)]).get()["valid"], true, "the token was not spent")
    }

    func testRegisteredMethodsAnswerOnTheWire() throws {
        requestNow("alice@example.com")
        let token = try lastToken()
        let router = Router(workers: makePool(threads: 1, name: "router"), metrics: Metrics())
        service.register(on: router)
        let valid = dispatch(router, "reset.validate", ["token": .string(token)])
        XCTAssertEqual(try valid.get()["valid"], true)
        XCTAssertEqual(try valid.get()["expires_at"]?.intValue, clock.nowMilliseconds() / 1000 + 1800)
        let weak = dispatch(router, "reset.complete", ["token": .string(token), "password": "weak"])
        XCTAssertEqual(weak.failure?.reason, .weakPassword)
        XCTAssertEqual(weak.failure?.code, 422)
        XCTAssertEqual(try dispatch(router, "reset.complete", ["token": .string(token), "password": "strong enough now"]).get(), ["ok": true])
        let used = dispatch(router, "reset.validate", ["token": .string(token)])
        XCTAssertEqual(used.failure?.reason, .invalidToken)
        XCTAssertEqual(used.failure?.code, 400)
        XCTAssertEqual(dispatch(router, "reset.complete", ["token": .string(token)]).failure?.reason, .invalidParams)
    }
}
