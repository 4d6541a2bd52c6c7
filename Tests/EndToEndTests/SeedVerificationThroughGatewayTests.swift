import Foundation
import LineProtocol
import Platform
import RPC
import StackLauncher
import XCTest

/// The seed app's one-time-code flows through the gateway with every real service and two
/// verification replicas: wrong code, cancel, voice through `next`, too many codes, the right
/// code lifting the session, and a `kill -9` of the replica that owns a request.
final class SeedVerificationThroughGatewayTests: StackTestCase {
    override func stackOptions(_ options: inout Stack.Options) {
        options.verificationReplicas = 2
        options.serviceEnvironment["gateway"] = ["LATCHKEY_RATE_LIMITS": "auth=0:1,codes=0:1,reset=0:1,default=0:1"]
        for limit in ["PER_NUMBER_10M", "PER_USER_10M", "PER_CLIENT_10M"] {
            options.environment["LATCHKEY_VERIFICATION_SENDS_\(limit)"] = "100"
        }
    }

    /// A user on a new device: the login asks for an SMS code.
    private func signIn(_ client: LineClient, _ username: String, phone: String) throws -> JSON {
        let password: JSON = "copper kettle maple 42"
        _ = try client.result("identity.register", [
            "username": .string(username), "password": password, "email": .string("\(username)@example.com"), "phone": .string(phone),
        ])
        let login = try client.result("identity.login", ["username": .string(username), "password": password, "device_id": "iphone"])
        XCTAssertEqual(login["required_factors"], ["sms"])
        return try XCTUnwrap(login["session"])
    }

    /// `channel: nil` starts the default workflow (SMS, then voice calls).
    private func start(_ client: LineClient, _ session: JSON, channel: String? = "sms") throws -> String {
        var params: [String: JSON] = ["session": session]
        if let channel { params["channel"] = .string(channel) }
        return try XCTUnwrap(try client.result("verification.start", .object(params))["request_id"]?.stringValue)
    }

    private func check(_ client: LineClient, _ session: JSON, _ requestID: String, _ code: String) throws -> RPCResponse {
        try client.call("verification.check", ["session": session, "request_id": .string(requestID), "code": .string(code)])
    }

    private func wrong(_ code: String) -> String { code == "000000" ? "111111" : "000000" }

    func testTheSeedAppsCodeFlowsThroughTheGateway() throws {
        let client = try gateway()
        let session = try signIn(client, "olga", phone: "+15555550161")

        // A wrong code says how many tries are left; cancel ends the request.
        let first = try start(client, session)
        let firstCode = try code(for: first)
        let wrongOnce = assertError(try check(client, session, first, wrong(firstCode)), "invalid_code")
        XCTAssertEqual(wrongOnce?.data?["attempts_left"], 2)
        XCTAssertEqual(try client.result("verification.cancel", ["session": session, "request_id": .string(first)])["status"], "cancelled")
        assertError(try check(client, session, first, firstCode), "conflict")

        // No SMS arrived? `next` calls instead: the voice message speaks a code that works.
        let second = try start(client, session, channel: nil)
        _ = try code(for: second)
        _ = try client.result("verification.next", ["session": session, "request_id": .string(second)])
        let spoken = try code(for: second, channel: "voice")
        XCTAssertEqual(try check(client, session, second, spoken).outcome.get()["status"], "verified")

        // Three wrong codes fail the request; even the right code no longer works.
        let loginAgain = try client.result("identity.login", ["username": "olga", "password": "copper kettle maple 42", "device_id": "ipad"])
        let session2 = try XCTUnwrap(loginAgain["session"])
        let third = try start(client, session2)
        let thirdCode = try code(for: third)
        assertError(try check(client, session2, third, wrong(thirdCode)), "invalid_code")
        assertError(try check(client, session2, third, wrong(thirdCode)), "invalid_code")
        assertError(try check(client, session2, third, wrong(thirdCode)), "too_many_attempts")
        // The session owed a factor it can no longer pass: it ended (the seed app logs out here).
        assertError(try check(client, session2, third, thirdCode), "unauthenticated")
        let session3 = try XCTUnwrap(try client.result("identity.login", ["username": "olga", "password": "copper kettle maple 42", "device_id": "ipad"])["session"])

        // Another user's request is not ours to check.
        let intruder = try signIn(client, "mallory", phone: "+15555550162")
        let fourth = try start(client, session3)
        assertError(try check(client, intruder, fourth, try code(for: fourth)), "not_found")
        let verified = try check(client, session3, fourth, try code(for: fourth)).outcome.get()
        XCTAssertEqual(verified["aal"], 2)
    }

    func testKillNineOfTheOwningReplicaAnswersUnavailableFastAndItsCodesWorkAfterRestart() throws {
        let client = try gateway()
        // Starts spread over both replicas; find one owned by the second replica.
        var owned: (session: JSON, requestID: String)?
        for index in 0..<8 where owned == nil {
            let session = try signIn(client, "user\(index)k", phone: String(format: "+1555555%04d", 200 + index))
            let requestID = try start(client, session)
            if requestID.hasPrefix("vr_verification-2_") { owned = (session, requestID) }
        }
        let (session, requestID) = try XCTUnwrap(owned, "starts reach the second replica")
        let code = try code(for: requestID)

        stack.kill("verification", replica: 1)
        // `unavailable`, not `timeout`: a dead owner is reported, not waited for.
        assertError(try check(client, session, requestID, code), "unavailable")
        // New starts go to the live replica meanwhile.
        let other = try signIn(client, "walter", phone: "+15555550299")
        XCTAssertTrue(try start(client, other).hasPrefix("vr_verification_"))

        try stack.restart("verification", replica: 1)
        var answer: RPCResponse?
        for _ in 0..<50 {
            answer = try check(client, session, requestID, code)
            if answer?.gatewayError?.reasonText != "unavailable" { break }
            usleep(100_000)
        }
        XCTAssertEqual(try XCTUnwrap(answer).outcome.get()["status"], "verified", "the request survived on the replica's disk")
    }
}
