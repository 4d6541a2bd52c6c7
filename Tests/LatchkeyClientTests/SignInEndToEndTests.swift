import Foundation
import LatchkeyClient
import XCTest

/// The seed app's sign-in through the client and the real stack: password, the SMS or voice
/// code the session owes, and the errors a person meets on the way.
final class SignInEndToEndTests: ClientStackTestCase {
    func testANewDeviceOwesSMSAndOnlyTheCodeLiftsTheSessionToBalances() async throws {
        let client = try client()
        let signedIn = try await client.signIn(username: "demo", password: demoPassword, deviceID: "iphone-1")
        XCTAssertEqual(signedIn.requiredFactors, [.sms])
        XCTAssertEqual(signedIn.aal, 1)
        XCTAssertTrue(client.isSignedIn)
        await XCTAssertThrowsLatchkeyError(.stepUpRequired(.factorsOwed([.sms]))) { try await client.balances() }

        let started = try await client.startCode(channel: .sms)
        XCTAssertEqual(started.purpose, "login")
        let checked = try await client.checkCode(try await code(for: started.requestID), requestID: started.requestID)
        XCTAssertEqual(checked.aal, 2)
        XCTAssertEqual(checked.status, "verified")

        let accounts = try await client.balances()
        XCTAssertEqual(accounts, [
            Account(name: .checking, balance: 500_000, currency: "USD"), Account(name: .saving, balance: 1_000_000, currency: "USD"),
        ])
    }

    func testAWrongPasswordAndAnUnknownUserAreTheSameInvalidCredentials() async throws {
        let client = try client()
        await XCTAssertThrowsLatchkeyError(.invalidCredentials) {
            try await client.signIn(username: "demo", password: "not the password", deviceID: "iphone-1")
        }
        await XCTAssertThrowsLatchkeyError(.invalidCredentials) {
            try await client.signIn(username: "nobody", password: "not the password", deviceID: "iphone-1")
        }
        XCTAssertFalse(client.isSignedIn)
        await XCTAssertThrowsLatchkeyError(.notSignedIn) { try await client.balances() }
    }

    func testAfterFiveWrongPasswordsTheAccountIsLockedWithItsRetryAfter() async throws {
        let client = try client()
        for _ in 0..<5 {
            await XCTAssertThrowsLatchkeyError(.invalidCredentials) {
                try await client.signIn(username: "demo", password: "a wrong guess", deviceID: "laptop")
            }
        }
        await XCTAssertThrowsLocked(lockSeconds: 30) {
            try await client.signIn(username: "demo", password: self.demoPassword, deviceID: "laptop")
        }
    }

    func testWrongCodesCountDownThenTooManyAttemptsEndsTheSession() async throws {
        let client = try client()
        _ = try await client.signIn(username: "demo", password: demoPassword, deviceID: "iphone-1")
        let started = try await client.startCode(channel: .sms)
        let right = try await code(for: started.requestID)
        let wrong = right == "000000" ? "111111" : "000000"
        await XCTAssertThrowsLatchkeyError(.invalidCode(attemptsLeft: 2)) { try await client.checkCode(wrong, requestID: started.requestID) }
        await XCTAssertThrowsLatchkeyError(.invalidCode(attemptsLeft: 1)) { try await client.checkCode(wrong, requestID: started.requestID) }
        await XCTAssertThrowsLatchkeyError(.tooManyAttempts) { try await client.checkCode(wrong, requestID: started.requestID) }
        // The session that owed the code has ended: the client learns it and forgets it.
        await XCTAssertThrowsLatchkeyError(.unauthenticated) { try await client.startCode() }
        XCTAssertFalse(client.isSignedIn)
    }

    func testNextSendsAVoiceCodeAndCancelEndsTheVerification() async throws {
        let client = try client()
        _ = try await client.signIn(username: "demo", password: demoPassword, deviceID: "iphone-1")
        let started = try await client.startCode()  // the server's workflow: sms, voice, voice
        _ = try await code(for: started.requestID)
        await XCTAssertThrowsLatchkeyError(.concurrentVerification(requestID: started.requestID)) { try await client.startCode() }

        try await client.nextCode(requestID: started.requestID)
        let voiceCode = try await code(for: started.requestID, channel: "voice")
        try await client.cancelCode(requestID: started.requestID)
        await XCTAssertThrowsLatchkeyError(.conflict(field: nil, detail: nil, status: "cancelled")) {
            try await client.checkCode(voiceCode, requestID: started.requestID)
        }
        await XCTAssertThrowsLatchkeyError(.notFound(detail: nil)) { try await client.cancelCode(requestID: "vr_verification_AAAAAAAAAAAAAAAAAAAAAA") }
    }

    func testSignOutEndsTheSessionOnTheServerAndHere() async throws {
        let store = InMemorySessionStore()
        let client = try client(store: store)
        try await signInWithCode(client)
        let stolen = try XCTUnwrap(store.loadSession())
        try await client.signOut()
        XCTAssertFalse(client.isSignedIn)
        await XCTAssertThrowsLatchkeyError(.notSignedIn) { try await client.balances() }

        // The token itself no longer opens anything, whoever holds it.
        let copy = InMemorySessionStore()
        copy.saveSession(stolen)
        await XCTAssertThrowsLatchkeyError(.unauthenticated) { try await self.client(store: copy).balances() }
        XCTAssertNil(copy.loadSession())
    }

    func testTheDeviceTokenOfOneLoginIsSentWithTheNextAndReplaced() async throws {
        let store = InMemorySessionStore()
        let client = try client(store: store)
        _ = try await client.signIn(username: "demo", password: demoPassword, deviceID: "iphone-1")
        let first = try XCTUnwrap(store.loadDeviceToken(username: "demo", deviceID: "iphone-1"))
        XCTAssertTrue(first.hasPrefix("lkd_"))
        // Guessers elsewhere lock the account for clients without a token, never for this phone.
        let guesser = try self.client()
        for _ in 0..<6 { _ = try? await guesser.signIn(username: "demo", password: "a wrong guess", deviceID: "laptop") }
        _ = try await client.signIn(username: "demo", password: demoPassword, deviceID: "iphone-1")
        let second = try XCTUnwrap(store.loadDeviceToken(username: "demo", deviceID: "iphone-1"))
        XCTAssertNotEqual(first, second)
    }

    func testRegisterThenSignInAndItsErrors() async throws {
        let client = try client()
        let userID = try await client.register(username: "alice", password: "a fine long phrase", email: "alice@example.com", phone: "5555550123")
        XCTAssertTrue(userID.hasPrefix("usr_"))
        await XCTAssertThrowsLatchkeyError(.conflict(field: "username", detail: nil, status: nil)) {
            try await client.register(username: "alice", password: "a fine long phrase", email: "a2@example.com", phone: "5555550123")
        }
        await XCTAssertThrowsLatchkeyError(.weakPassword(rule: "too_short")) {
            try await client.register(username: "bob", password: "short", email: "bob@example.com", phone: "5555550124")
        }
        await XCTAssertThrowsLatchkeyError(.invalidParams(field: "phone", rule: nil)) {
            try await client.register(username: "bob", password: "a fine long phrase", email: "bob@example.com", phone: "555-0100")
        }
        let signedIn = try await client.signIn(username: "alice", password: "a fine long phrase", deviceID: "iphone-9")
        XCTAssertEqual(signedIn.requiredFactors, [.sms])
        // Alice's phone is a claim until a code comes back: her first code is the proof and the factor.
        let started = try await client.startCode(channel: .sms)
        XCTAssertEqual(started.purpose, "phone_proof")
        let checked = try await client.checkCode(try await code(for: started.requestID), requestID: started.requestID)
        XCTAssertEqual(checked.phoneVerified, true)
        let balances = try await client.balances()
        XCTAssertEqual(balances.map(\.balance), [0, 0])
    }
}
