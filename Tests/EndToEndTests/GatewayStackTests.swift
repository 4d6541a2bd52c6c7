import Foundation
import LineProtocol
import RPC
import StackLauncher
import XCTest

/// The gateway's session cache and step-up against the real identity and verification
/// (two replicas), through the full stack.
final class GatewayStackTests: StackTestCase {
    static let password = "correct horse battery"

    override func stackOptions(_ options: inout Stack.Options) { options.verificationReplicas = 2 }

    private func introspections() throws -> Int64 {
        try direct("identity").result("identity.metrics")["methods"]?["identity.introspect"]?["count"]?.intValue ?? 0
    }

    private func registerAndLogin(_ client: LineClient, _ username: String) throws -> JSON {
        _ = try client.result("identity.register", [
            "username": .string(username), "password": .string(Self.password),
            "email": .string("\(username)@example.com"), "phone": "(555) 555-0100",
        ])
        return try client.result("identity.login", [
            "username": .string(username), "password": .string(Self.password), "device_id": .string("device-\(username)"),
        ])
    }

    func testSessionChecksAreCachedAndLogoutEndsTheSessionAtOnce() throws {
        let client = try gateway()
        let session = try XCTUnwrap(try registerAndLogin(client, "frank")["session"])
        let before = try introspections()
        for _ in 0..<5 { XCTAssertNotNil(try client.result("identity.sessions", ["session": session])["sessions"]) }
        XCTAssertEqual(try introspections() - before, 1, "one introspection served five calls")
        XCTAssertEqual(try client.result("identity.logout", ["session": session])["ok"], true)
        assertError(try client.call("identity.sessions", ["session": session]), "unauthenticated")
        assertError(try client.call("accounts.balances", ["session": session]), "unauthenticated")
    }

    func testAnSMSCodeThroughTheGatewayLiftsTheSessionToStepUpAtOnce() throws {
        let client = try gateway()
        let login = try registerAndLogin(client, "grace")
        XCTAssertEqual(login["required_factors"], ["sms"])
        let session = try XCTUnwrap(login["session"])
        let enroll: JSON = ["session": session, "device_id": "device-grace", "public_key": "AAAA", "protection": "biometry"]
        assertError(try client.call("identity.enroll_key", enroll), "step_up_required")

        let requestID = try XCTUnwrap(try client.result("verification.start", ["session": session, "channel": "sms"])["request_id"]?.stringValue)
        XCTAssertTrue(requestID.hasPrefix("vr_verification"), requestID)
        _ = try code(for: requestID)  // waits for the queued message
        let message = try XCTUnwrap(outbox().last { $0["request_id"]?.stringValue == requestID })
        let text = message["text"]?.stringValue ?? ""
        let code = try XCTUnwrap(text.split(whereSeparator: { !$0.isNumber }).first { $0.count >= 4 }.map(String.init), text)
        let checked = try client.result("verification.check", ["session": session, "request_id": .string(requestID), "code": .string(code)])
        XCTAssertEqual(checked["status"], "verified")

        // No stale aal 1 from the cache: the key request now reaches identity (which judges the key itself).
        let answer = try client.call("identity.enroll_key", enroll)
        if case .failure(let error) = answer.outcome { XCTAssertNotEqual(error.reason, .stepUpRequired, error.message) }
    }

    func testInternalMethodsOfTheRealServicesAreUnreachable() throws {
        let client = try gateway()
        let session = try XCTUnwrap(try registerAndLogin(client, "heidi")["session"])
        for method in ["identity.introspect", "identity.elevate", "identity.revoke_all", "identity.set_password", "identity.user",
                       "identity.find_by_email", "identity.check_password", "identity.record", "accounts.audit", "accounts.deposit",
                       "verification.metrics", "identity.health"] {
            let answer = try client.call(method, ["session": session, "user_id": "1", "session_id": "1", "factor": "sms", "password": "x"])
            XCTAssertEqual(answer.gatewayError?.code, -32601, method)
        }
        // Still aal 1: nobody elevated it through the back door.
        assertError(try client.call("identity.enroll_key", ["session": session, "device_id": "d", "public_key": "AAAA", "protection": "biometry"]), "step_up_required")
    }
}
