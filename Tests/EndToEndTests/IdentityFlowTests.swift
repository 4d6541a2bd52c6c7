import Foundation
import LineProtocol
import RPC
import Secrets
import XCTest

/// The seed app's login flow against the real executables over TCP, through the gateway:
/// register, password login on a new device (`sms` required), a second factor (identity.elevate,
/// called directly as verification will), a biometry key made here as an iPhone makes it,
/// biometric login, sessions listed and revoked, and every bad input answered with its reason.
final class IdentityFlowTests: StackTestCase {
    static let password = "correct horse battery"

    private func register(_ client: LineClient, _ username: String) throws -> String {
        let result = try client.result("identity.register", [
            "username": .string(username), "password": .string(Self.password),
            "email": .string("\(username)@example.com"), "phone": "(555) 555-0100",
        ])
        return try XCTUnwrap(result["user_id"]?.stringValue)
    }

    private func login(_ client: LineClient, _ username: String, device: String) throws -> JSON {
        try appLogin(client, username, password: Self.password, device: device)
    }

    private func challenge(_ client: LineClient, _ params: [String: JSON]) throws -> JSON {
        try XCTUnwrap(try client.result("identity.challenge", .object(params))["challenge"])
    }

    func testSeedLoginFlowThroughTheGateway() throws {
        let gateway = try gateway()
        let identity = try direct("identity")
        let phone = SimulatedDevice(id: "6F9619FF-8B86-D011-B42D-00C04FC964FF")

        let userID = try register(gateway, "Carol")
        XCTAssertEqual(try identity.result("identity.user", ["user_id": .string(userID)])["phone"], "+15555550100")

        // Password login on a new device: aal 1, SMS needed.
        let first = try login(gateway, "carol", device: phone.id)
        XCTAssertEqual(first["aal"], 1)
        XCTAssertEqual(first["required_factors"], ["sms"])
        XCTAssertEqual(first["sitekey"], .null)
        let session = try XCTUnwrap(first["session"])
        XCTAssertTrue(OpaqueToken.isWellFormed(session.stringValue ?? "", prefix: "lks_"))

        // A key needs aal 2.
        assertError(try gateway.call("identity.enroll_key", [
            "session": session, "device_id": .string(phone.id), "public_key": phone.publicKey, "protection": "biometry",
        ]), "step_up_required")

        // The SMS code checks out (verification's part): identity.elevate on the identity port.
        let introspected = try identity.result("identity.introspect", ["session": session])
        XCTAssertEqual(introspected["user_id"]?.stringValue, userID)
        XCTAssertEqual(introspected["aal2_at"], .null)
        XCTAssertEqual(try identity.result("identity.elevate", ["session_id": introspected["session_id"]!, "factor": "sms"])["aal"], 2)
        XCTAssertNotEqual(try identity.result("identity.introspect", ["session": session])["aal2_at"], .null)

        // Enroll a biometry key, then log in with it: no password, aal 2.
        let keyID = try gateway.result("identity.enroll_key", [
            "session": session, "device_id": .string(phone.id), "public_key": phone.publicKey, "protection": "biometry",
        ])["key_id"]
        XCTAssertEqual(try login(gateway, "carol", device: phone.id)["required_factors"], ["device_key"])
        let nonce = try challenge(gateway, ["username": "carol", "device_id": .string(phone.id)])
        XCTAssertEqual(Base64URL.decode(nonce.stringValue ?? "")?.count, 32)
        let keyLogin = try gateway.result("identity.key_login", [
            "username": "carol", "device_id": .string(phone.id), "challenge": nonce, "signature": phone.sign(nonce),
        ])
        XCTAssertEqual(keyLogin["aal"], 2)
        XCTAssertEqual(keyLogin["required_factors"], [])
        let biometric = try XCTUnwrap(keyLogin["session"])
        XCTAssertEqual(try gateway.result("identity.keys", ["session": biometric])["keys"]?.arrayValue?.first?["key_id"], keyID)

        // The same challenge again: used.
        let reused = assertError(try gateway.call("identity.key_login", [
            "username": "carol", "device_id": .string(phone.id), "challenge": nonce, "signature": phone.sign(nonce),
        ]), "invalid_token")
        XCTAssertEqual(reused?.data?["detail"], "used")

        // verify_key on a password session lifts it to aal 2.
        let plain = try XCTUnwrap(try login(gateway, "carol", device: phone.id)["session"])
        let fresh = try challenge(gateway, ["session": plain, "device_id": .string(phone.id)])
        XCTAssertEqual(try gateway.result("identity.verify_key", [
            "session": plain, "device_id": .string(phone.id), "challenge": fresh, "signature": phone.sign(fresh),
        ])["aal"], 2)

        // Sessions: list (never a token), revoke one, it stops working at once.
        let listed = try XCTUnwrap(try gateway.result("identity.sessions", ["session": session])["sessions"]?.arrayValue)
        XCTAssertEqual(listed.count, 4)
        XCTAssertFalse(String(decoding: JSON.array(listed).encoded(), as: UTF8.self).contains("lks_"))
        let biometricID = try XCTUnwrap(try identity.result("identity.introspect", ["session": biometric])["session_id"])
        XCTAssertEqual(try gateway.result("identity.revoke", ["session": session, "session_id": biometricID])["ok"], true)
        assertError(try gateway.call("identity.keys", ["session": biometric]), "unauthenticated")
        assertError(try gateway.call("identity.revoke", ["session": session, "session_id": biometricID]), "not_found")

        // The activity feed tells the story ("was this you?").
        let events = try XCTUnwrap(try gateway.result("identity.activity", ["session": session, "limit": 50])["events"]?.arrayValue)
        let names = Set(events.compactMap { $0["event"]?.stringValue })
        for expected in ["user.registered", "login.succeeded", "factor.passed", "key.enrolled", "key_login.succeeded", "session.revoked"] {
            XCTAssertTrue(names.contains(expected), "missing \(expected) in \(names.sorted())")
        }
        XCTAssertNotNil(events.first?["client"]?.stringValue, "the gateway passes the client address")

        // Revoke the key: key login now fails, saying no more than a wrong signature would.
        XCTAssertEqual(try gateway.result("identity.revoke_key", ["session": session, "key_id": keyID!])["ok"], true)
        let afterRevoke = try challenge(gateway, ["username": "carol", "device_id": .string(phone.id)])
        let revoked = assertError(try gateway.call("identity.key_login", [
            "username": "carol", "device_id": .string(phone.id), "challenge": afterRevoke, "signature": phone.sign(afterRevoke),
        ]), "invalid_credentials")
        XCTAssertNil(revoked?.data?["detail"])

        // Logout ends the session.
        XCTAssertEqual(try gateway.result("identity.logout", ["session": session])["ok"], true)
        assertError(try identity.call("identity.introspect", ["session": session]), "unauthenticated")
    }

    func testBadInputsThroughTheGateway() throws {
        let gateway = try gateway()
        let identity = try direct("identity")
        _ = try register(gateway, "dave")

        // Registration.
        let conflict = assertError(try gateway.call("identity.register", [
            "username": "DAVE", "password": "another good phrase", "email": "dave.two@example.com", "phone": "5555550100",
        ]), "conflict")
        XCTAssertEqual(conflict?.data?["field"], "username")
        let weak = assertError(try gateway.call("identity.register", [
            "username": "erin", "password": "erin-rocks-1", "email": "erin@example.com", "phone": "5555550100",
        ]), "weak_password")
        XCTAssertEqual(weak?.data?["rule"], "contains_username")
        for (field, params) in [
            ("phone", ["username": "erin", "password": "a fine phrase", "email": "erin@example.com", "phone": "12"]),
            ("email", ["username": "erin", "password": "a fine phrase", "email": "erin-at-example", "phone": "5555550100"]),
            ("username", ["username": "e", "password": "a fine phrase", "email": "erin@example.com", "phone": "5555550100"]),
        ] as [(String, JSON)] {
            XCTAssertEqual(assertError(try gateway.call("identity.register", params), "invalid_params")?.data?["field"]?.stringValue, field)
        }

        // Login: wrong password and unknown user answer alike; types are checked.
        let wrong = assertError(try gateway.call("identity.login", ["username": "dave", "password": "not it at all", "device_id": "d1"]), "invalid_credentials")
        let unknown = assertError(try gateway.call("identity.login", ["username": "nobody", "password": "not it at all", "device_id": "d1"]), "invalid_credentials")
        XCTAssertEqual(wrong, unknown)
        assertError(try gateway.call("identity.login", ["username": "dave", "password": 12345678, "device_id": "d1"]), "invalid_params")
        assertError(try gateway.call("identity.login", ["username": "dave", "password": .string(Self.password)]), "invalid_params")

        // Sessions.
        for token in ["lks_nope", "", "lkr_" + Base64URL.encode(SecureRandom.bytes(32))] {
            assertError(try gateway.call("identity.sessions", ["session": .string(token)]), "unauthenticated")
        }

        // Device keys: bad key, bad signature, foreign and unknown challenges.
        let phone = SimulatedDevice(id: "iphone-dave")
        let session = try XCTUnwrap(try login(gateway, "dave", device: phone.id)["session"])
        let sessionID = try XCTUnwrap(try identity.result("identity.introspect", ["session": session])["session_id"])
        _ = try identity.result("identity.elevate", ["session_id": sessionID, "factor": "sms"])
        assertError(try gateway.call("identity.enroll_key", [
            "session": session, "device_id": .string(phone.id), "public_key": .string(Data(repeating: 4, count: 65).base64EncodedString()),
            "protection": "biometry",
        ]), "invalid_params")
        _ = try gateway.result("identity.enroll_key", ["session": session, "device_id": .string(phone.id), "public_key": phone.publicKey, "protection": "biometry"])
        let nonce = try challenge(gateway, ["username": "dave", "device_id": .string(phone.id)])
        assertError(try gateway.call("identity.key_login", [
            "username": "dave", "device_id": .string(phone.id), "challenge": nonce, "signature": SimulatedDevice(id: phone.id).sign(nonce),
        ]), "invalid_credentials")
        let other = try challenge(gateway, ["username": "dave", "device_id": "ipad-dave"])
        XCTAssertEqual(assertError(try gateway.call("identity.key_login", [
            "username": "dave", "device_id": .string(phone.id), "challenge": other, "signature": phone.sign(other),
        ]), "invalid_token")?.data?["detail"], "foreign")
        let invented = JSON.string(Base64URL.encode(SecureRandom.bytes(32)))
        XCTAssertEqual(assertError(try gateway.call("identity.key_login", [
            "username": "dave", "device_id": .string(phone.id), "challenge": invented, "signature": phone.sign(invented),
        ]), "invalid_token")?.data?["detail"], "unknown")
        XCTAssertEqual(assertError(try gateway.call("identity.key_login", [
            "username": "nobody", "device_id": .string(phone.id), "challenge": invented, "signature": phone.sign(invented),
        ]), "invalid_token")?.data?["detail"], "unknown", "an unknown user is told what a known one is")

        // Internal methods answer their documented errors.
        assertError(try identity.call("identity.user", ["user_id": "usr_nope"]), "not_found")
        assertError(try identity.call("identity.elevate", ["session_id": "ses_nope", "factor": "sms"]), "not_found")
        assertError(try identity.call("identity.find_by_email", ["email": "nobody@example.com"]), "not_found")
        let userID = try XCTUnwrap(try identity.result("identity.find_by_email", ["email": "DAVE@example.com"])["user_id"])
        XCTAssertEqual(assertError(try identity.call("identity.check_password", ["user_id": userID, "password": "short"]), "weak_password")?.data?["rule"], "too_short")
        XCTAssertEqual(try identity.result("identity.set_password", ["user_id": userID, "password": "a new long phrase"])["ok"], true)
        XCTAssertEqual(try identity.result("identity.revoke_all", ["user_id": userID])["revoked"], 1)
        assertError(try gateway.call("identity.sessions", ["session": session]), "unauthenticated")
        XCTAssertEqual(try identity.result("identity.record", ["user_id": userID, "event": "password.reset", "outcome": "ok"])["ok"], true)
    }

    func testRepeatedFailuresLockTheAccountWithRetryAfter() throws {
        let gateway = try gateway()
        _ = try register(gateway, "frank")
        for _ in 0..<5 {
            assertError(try gateway.call("identity.login", ["username": "frank", "password": "guess guess guess", "device_id": "d1"]), "invalid_credentials")
        }
        let locked = assertError(try gateway.call("identity.login", ["username": "frank", "password": .string(Self.password), "device_id": "d1"]), "locked")
        // The 30 s lock counts from the failure that set it: a slow run sees a second or two less.
        let retryAfter = try XCTUnwrap(locked?.data?["retry_after"]?.intValue)
        XCTAssertTrue((1...30).contains(retryAfter), "retry_after \(retryAfter)")
    }
}
