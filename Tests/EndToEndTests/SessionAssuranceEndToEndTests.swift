import Foundation
import LineProtocol
import RPC
import Secrets
import XCTest

/// Session assurance attacked as an attacker would, through the gateway with
/// every real executable: a password alone (a session that owes a factor) gets nothing but the
/// factor, a logout and its own entry; a reset kills every device key and trusted device; a
/// login code guessed three times ends the session; an overlong reset password is a weak one.
final class SessionAssuranceEndToEndTests: StackTestCase {
    static let password = "correct horse battery"
    static let newPassword = "staple gun rhubarb kite"

    private func register(_ client: LineClient, _ username: String) throws {
        _ = try client.result("identity.register", [
            "username": .string(username), "password": .string(Self.password),
            "email": .string("\(username)@example.com"), "phone": "+15555550142",
        ])
    }

    private func login(_ client: LineClient, _ username: String, device: String, password: String = password) throws -> JSON {
        try client.result("identity.login", ["username": .string(username), "password": .string(password), "device_id": .string(device)])
    }

    private func passSMS(_ client: LineClient, _ session: JSON) throws { try passLoginFactor(client, session: session) }

    func testASessionThatOwesAFactorMayOnlyCompleteItReadItselfAndLogOut() throws {
        let gateway = try gateway()
        let identity = try direct("identity")
        try register(gateway, "erin")
        // The owner: aal 2 on her phone.
        let owner = try XCTUnwrap(try login(gateway, "erin", device: "owner-phone")["session"])
        try passSMS(gateway, owner)
        let ownerID = try XCTUnwrap(try identity.result("identity.introspect", ["session": owner])["session_id"])

        // The thief has the password, on a new device: aal 1, owes sms.
        let stolen = try login(gateway, "erin", device: "thief-phone")
        XCTAssertEqual(stolen["required_factors"], ["sms"])
        let thief = try XCTUnwrap(stolen["session"])
        let introspected = try identity.result("identity.introspect", ["session": thief])
        XCTAssertEqual(introspected["required_factors"], ["sms"])
        XCTAssertEqual(introspected["aal2_at"], .null)

        let refused: [(String, [String: JSON])] = [
            ("accounts.balances", [:]), ("accounts.history", [:]),
            ("accounts.transfer", ["from": "checking", "to": "saving", "amount": 100, "idempotency_key": "k1"]),
            ("identity.activity", [:]), ("identity.keys", [:]), ("identity.preferences", [:]),
            ("identity.revoke", ["session_id": ownerID]), ("identity.revoke_key", ["key_id": "key_x"]),
        ]
        for (method, params) in refused {
            var withSession = params
            withSession["session"] = thief
            let error = assertError(try gateway.call(method, .object(withSession)), "step_up_required")
            XCTAssertEqual(error?.data?["required_factors"], ["sms"], method)
        }
        // The services that check sessions themselves agree with the gateway.
        assertError(try direct("accounts").call("accounts.balances", ["session": thief]), "step_up_required")
        assertError(try identity.call("identity.activity", ["session": thief]), "step_up_required")
        assertError(try identity.call("identity.revoke", ["session": thief, "session_id": ownerID]), "step_up_required")

        // Its own entry only, never the owner's sessions.
        let listed = try XCTUnwrap(try gateway.result("identity.sessions", ["session": thief])["sessions"]?.arrayValue)
        XCTAssertEqual(listed.count, 1)
        XCTAssertEqual(listed.first?["current"], true)
        XCTAssertEqual(listed.first?["required_factors"], ["sms"])
        // The owner's session survived all of it.
        XCTAssertEqual(try gateway.result("identity.sessions", ["session": owner])["sessions"]?.arrayValue?.count, 2)

        // Completing the factor lifts every restriction.
        try passSMS(gateway, thief)
        XCTAssertNotNil(try gateway.result("accounts.balances", ["session": thief])["accounts"])

        // An owing session may log out.
        let another = try XCTUnwrap(try login(gateway, "erin", device: "third-phone")["session"])
        XCTAssertEqual(try gateway.result("identity.logout", ["session": another])["ok"], true)
        assertError(try gateway.call("identity.sessions", ["session": another]), "unauthenticated")
    }

    func testSensitiveChangesNeedARecentSecondFactorAndAFreshOneWorks() throws {
        let gateway = try gateway()
        try register(gateway, "fay")
        let phone = SimulatedDevice(id: "fay-phone")
        let session = try XCTUnwrap(try login(gateway, "fay", device: phone.id)["session"])
        try passSMS(gateway, session)
        let keyID = try XCTUnwrap(try gateway.result("identity.enroll_key", [
            "session": session, "device_id": .string(phone.id), "public_key": phone.publicKey, "protection": "biometry",
        ])["key_id"])
        let introspected = try direct("identity").result("identity.introspect", ["session": session])
        let aal2At = try XCTUnwrap(introspected["aal2_at"]?.intValue)
        XCTAssertEqual(introspected["step_up_until"]?.intValue, aal2At + 600, "the default window is 10 minutes")
        XCTAssertEqual(try gateway.result("identity.revoke_key", ["session": session, "key_id": keyID])["ok"], true)
    }

    func testTooManyWrongLoginCodesEndTheSessionWithANonRetryableAnswer() throws {
        let gateway = try gateway()
        try register(gateway, "gus")
        let session = try XCTUnwrap(try login(gateway, "gus", device: "gus-phone")["session"])
        let requestID = try XCTUnwrap(try gateway.result("verification.start", ["session": session])["request_id"])
        let right = try code(for: requestID.stringValue ?? "")
        let wrong = String(right.map { $0 == "9" ? "0" : Character(String(($0.wholeNumberValue ?? 0) + 1)) })
        for attempt in 1...3 {
            let answer = try gateway.call("verification.check", ["session": session, "request_id": requestID, "code": .string(wrong)])
            let error = assertError(answer, attempt < 3 ? "invalid_code" : "too_many_attempts")
            if attempt == 3 {
                XCTAssertEqual(error?.code, 410, "a failed verification is over: not a 429 to retry")
                XCTAssertNil(error?.data?["retry_after"])
            }
        }
        assertError(try gateway.call("identity.sessions", ["session": session]), "unauthenticated")
        assertError(try direct("identity").call("identity.introspect", ["session": session]), "unauthenticated")
    }

    func testAResetRevokesEveryDeviceKeyAndTrustedDeviceAndANewKeyEnrolls() throws {
        let gateway = try gateway()
        try register(gateway, "hal")
        let attacker = SimulatedDevice(id: "attacker-phone")
        let session = try XCTUnwrap(try login(gateway, "hal", device: attacker.id)["session"])
        try passSMS(gateway, session)
        _ = try gateway.result("identity.enroll_key", [
            "session": session, "device_id": .string(attacker.id), "public_key": attacker.publicKey, "protection": "biometry",
        ])
        func keyLogin(_ device: SimulatedDevice) throws -> RPCResponse {
            let challenge = try XCTUnwrap(try gateway.result("identity.challenge", ["username": "hal", "device_id": .string(device.id)])["challenge"])
            return try gateway.call("identity.key_login", [
                "username": "hal", "device_id": .string(device.id), "challenge": challenge, "signature": device.sign(challenge),
            ])
        }
        XCTAssertEqual(try keyLogin(attacker).outcome.get()["aal"], 2)

        let token = try resetToken(gateway, "hal@example.com")
        XCTAssertEqual(try gateway.result("reset.complete", ["token": .string(token), "password": .string(Self.newPassword)]), ["ok": true])

        assertError(try keyLogin(attacker), "invalid_credentials")
        // The device is no longer trusted: the new password alone owes a factor again.
        let fresh = try login(gateway, "hal", device: attacker.id, password: Self.newPassword)
        XCTAssertEqual(fresh["required_factors"], ["sms"])

        // The owner enrolls a new key on her phone and logs in with it.
        let owner = SimulatedDevice(id: "owner-phone")
        let ownerSession = try XCTUnwrap(try login(gateway, "hal", device: owner.id, password: Self.newPassword)["session"])
        try passSMS(gateway, ownerSession)
        _ = try gateway.result("identity.enroll_key", [
            "session": ownerSession, "device_id": .string(owner.id), "public_key": owner.publicKey, "protection": "biometry",
        ])
        XCTAssertEqual(try keyLogin(owner).outcome.get()["aal"], 2)
        XCTAssertEqual(try gateway.result("identity.keys", ["session": ownerSession])["keys"]?.arrayValue?.count, 1)
        let notice = try XCTUnwrap(outbox().last(where: { $0["subject"]?.stringValue?.contains("password was changed") == true })?["text"]?.stringValue)
        XCTAssertTrue(notice.contains("biometric"), notice)
    }

    /// The intruder's sequence: the password and one stolen SMS code on the intruder's phone,
    /// then an authenticator app and recovery codes planted. The owner is mailed each plant at
    /// once; after the owner's reset the plants pay nothing and the reset's mail names them.
    func testAResetRemovesTheFactorsAnIntruderPlantedAndTheOwnerHeardOfEach() throws {
        let gateway = try gateway()
        try register(gateway, "ivy")
        let intruder = try XCTUnwrap(try login(gateway, "ivy", device: "intruder-phone")["session"])
        try passSMS(gateway, intruder)
        let enrolled = try gateway.result("identity.totp_enroll", ["session": intruder])
        let secret = try XCTUnwrap(enrolled["secret"]?.stringValue)
        XCTAssertEqual(try gateway.result("identity.totp_activate", ["session": intruder, "code": .string(try totp(secret))]), ["ok": true])
        let codes = try XCTUnwrap(try gateway.result("identity.recovery_codes", ["session": intruder])["codes"]?.arrayValue)
        for subject in ["an authenticator app was set up", "new recovery codes were made"] {
            let notice = try waitForMail(to: "ivy@example.com", subjectContaining: subject)
            XCTAssertTrue(notice["text"]?.stringValue?.contains("intruder-phone") ?? false, "\(notice)")
        }

        let token = try resetToken(gateway, "ivy@example.com")
        XCTAssertEqual(try gateway.result("reset.complete", ["token": .string(token), "password": .string(Self.newPassword)]), ["ok": true])
        let resetMail = try waitForMail(to: "ivy@example.com", subjectContaining: "password was changed")
        let text = try XCTUnwrap(resetMail["text"]?.stringValue)
        XCTAssertTrue(text.contains("the authenticator app and the recovery codes"), text)

        let fresh = try login(gateway, "ivy", device: "new-phone", password: Self.newPassword)
        XCTAssertEqual(fresh["required_factors"], ["sms"], "the planted app is no factor any more")
        let session = try XCTUnwrap(fresh["session"])
        assertError(try gateway.call("identity.totp_verify", ["session": session, "code": .string(try totp(secret, offsetSteps: 1))]), "not_found")
        assertError(try gateway.call("identity.recovery_verify", ["session": session, "code": codes[0]]), "invalid_code")
        assertError(try gateway.call("identity.activity", ["session": session]), "step_up_required")
    }

    func testAResetPasswordOver1024BytesIsWeakNotUnavailable() throws {
        let gateway = try gateway()
        try register(gateway, "ida")
        let token = try resetToken(gateway, "ida@example.com")
        let long = String(repeating: "long words ", count: 100)
        let error = assertError(try gateway.call("reset.complete", ["token": .string(token), "password": .string(long)]), "weak_password")
        XCTAssertEqual(error?.data?["rule"], "too_long")
        XCTAssertEqual(try gateway.result("reset.complete", ["token": .string(token), "password": .string(Self.newPassword)]), ["ok": true])
    }

    /// Asks for a reset and reads the token from the link mailed to `address`.
    private func resetToken(_ client: LineClient, _ address: String) throws -> String {
        XCTAssertEqual(try client.result("reset.request", ["email": .string(address)]), ["ok": true])
        let deadline = Date().addingTimeInterval(10)
        var text: String?
        while text == nil && Date() < deadline {
            text = outboxAfterRegistration().last(where: { $0["to"]?.stringValue == address && ($0["text"]?.stringValue ?? "").contains("token=") })?["text"]?.stringValue
            if text == nil { usleep(20_000) }
        }
        let body = try XCTUnwrap(text, "no reset mail to \(address)")
        let range = try XCTUnwrap(body.range(of: "token="))
        return String(body[range.upperBound...].prefix { $0 != "\n" })
    }
}
