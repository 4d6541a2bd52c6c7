import Foundation
import LineProtocol
import RPC
import XCTest

/// The public form with the real identity service: a session's login factor by SMS lifts the
/// session to aal 2.
final class VerificationIdentityEndToEndTests: VerificationStackTestCase {
    private func session(_ identity: LineClient, username: String, phone: String) throws -> String {
        let registered = try identity.call("identity.register", [
            "username": .string(username), "password": "a long enough passphrase 42", "email": .string("\(username)@example.com"),
            "phone": .string(phone),
        ])
        _ = try registered.outcome.get()
        let login = try identity.result("identity.login", [
            "username": .string(username), "password": "a long enough passphrase 42", "device_id": "iphone-e2e",
        ])
        return try XCTUnwrap(login["session"]?.stringValue)
    }

    func testSmsLoginFactorLiftsTheSessionToAal2() throws {
        let identity = try direct("identity")
        let token = try session(identity, username: "alice", phone: "+15555550130")
        let verification = try direct("verification")
        let id = try XCTUnwrap(try verification.result("verification.start", ["session": .string(token), "channel": "sms"])["request_id"]?.stringValue)
        let code = try code(for: id)
        XCTAssertEqual(outbox().last?["to"], "+15555550130", "the phone on the profile")
        let bad = code == "000000" ? "111111" : "000000"
        assertError(try verification.call("verification.check", ["session": .string(token), "request_id": .string(id), "code": .string(bad)]), "invalid_code")
        XCTAssertEqual(
            try verification.result("verification.check", ["session": .string(token), "request_id": .string(id), "code": .string(code)]),
            ["status": "verified", "aal": 2, "phone_verified": true], "the first code also proves the phone")
        XCTAssertEqual(try identity.result("identity.introspect", ["session": .string(token)])["aal"], 2)
    }

    func testAnotherUsersSessionCannotCheckOrCancel() throws {
        let identity = try direct("identity")
        let alice = try session(identity, username: "alice", phone: "+15555550131")
        let mallory = try session(identity, username: "mallory", phone: "+15555550132")
        let verification = try direct("verification")
        let id = try XCTUnwrap(try verification.result("verification.start", ["session": .string(alice)])["request_id"]?.stringValue)
        let code = try code(for: id)
        assertError(try verification.call("verification.check", ["session": .string(mallory), "request_id": .string(id), "code": .string(code)]), "not_found")
        assertError(try verification.call("verification.cancel", ["session": .string(mallory), "request_id": .string(id)]), "not_found")
        assertError(try verification.call("verification.start", ["session": "lks_not-a-session"]), "unauthenticated")
        XCTAssertEqual(try identity.result("identity.introspect", ["session": .string(mallory)])["aal"], 1)
    }
}
