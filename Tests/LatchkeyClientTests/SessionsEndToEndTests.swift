import Foundation
import LatchkeyClient
import XCTest

/// Listing and revoking sessions from the phone: "sign out my other devices".
final class SessionsEndToEndTests: ClientStackTestCase {
    func testOneDeviceSeesAndRevokesAnothersSession() async throws {
        let phone = try client(), tablet = try client()
        try await signInWithCode(phone, deviceID: "iphone-1")
        try await signInWithCode(tablet, deviceID: "ipad-1")

        let sessions = try await phone.sessions()
        XCTAssertEqual(Set(sessions.map(\.deviceID)), ["iphone-1", "ipad-1"])
        XCTAssertEqual(sessions.filter(\.current).map(\.deviceID), ["iphone-1"])
        let tabletSession = try XCTUnwrap(sessions.first { $0.deviceID == "ipad-1" })
        try await phone.revokeSession(sessionID: tabletSession.sessionID)

        await XCTAssertThrowsLatchkeyError(.unauthenticated) { try await tablet.balances() }
        XCTAssertFalse(tablet.isSignedIn)
        let left = try await phone.sessions()
        XCTAssertEqual(left.map(\.deviceID), ["iphone-1"])
        await XCTAssertThrowsLatchkeyError(.notFound(detail: nil)) { try await phone.revokeSession(sessionID: tabletSession.sessionID) }
    }

    func testASessionThatOwesItsFactorSeesOnlyItselfAndIsRefusedTheRest() async throws {
        let phone = try client(), thief = try client()
        try await signInWithCode(phone, deviceID: "iphone-1")
        _ = try await thief.signIn(username: "demo", password: demoPassword, deviceID: "thief-phone")
        let seen = try await thief.sessions()
        XCTAssertEqual(seen.map(\.deviceID), ["thief-phone"])
        XCTAssertEqual(seen.first?.requiredFactors, [.sms])
        await XCTAssertThrowsLatchkeyError(.stepUpRequired(.factorsOwed([.sms]))) {
            try await thief.revokeSession(sessionID: try XCTUnwrap(phone.store.loadSession()?.sessionID))
        }
        await XCTAssertThrowsLatchkeyError(.stepUpRequired(.factorsOwed([.sms]))) { try await thief.preferences(smsVerification: false) }
    }

    func testPreferencesAndActivityRead() async throws {
        let client = try client()
        try await signInWithCode(client)
        let turnedOn = try await client.preferences(smsVerification: true)
        XCTAssertEqual(turnedOn.smsVerification, true)
        XCTAssertNil(turnedOn.sitekey)
        let image = Data([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52])
        let withImage = try await client.preferences(sitekey: .set(image))
        XCTAssertEqual(withImage.sitekey, image.base64EncodedString())
        let withoutImage = try await client.preferences(sitekey: .remove)
        XCTAssertNil(withoutImage.sitekey)

        let first = try await client.activity(limit: 2)
        XCTAssertEqual(first.events.count, 2)
        let next = try XCTUnwrap(first.next)
        let older = try await client.activity(limit: 2, before: next)
        XCTAssertFalse(older.events.isEmpty)
        XCTAssertTrue(Set(first.events.map(\.eventID)).isDisjoint(with: older.events.map(\.eventID)))
    }
}
