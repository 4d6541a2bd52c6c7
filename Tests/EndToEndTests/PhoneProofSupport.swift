import Foundation
import LineProtocol
import RPC
import XCTest

/// A phone number is a factor only once its owner proved it. Tests that are about something else
/// (money, crashes, HTTP) prove the phone in their setup, as a user's first SMS code would.
extension StackTestCase {
    /// Setup shortcut: identity's internal `identity.prove_phone`, what verification calls after
    /// a `phone_proof` code comes back (PhoneOwnershipEndToEndTests walks the real flow).
    func provePhone(userID: String, phone: String) throws {
        let proved = try direct("identity").result("identity.prove_phone", ["user_id": .string(userID), "phone": .string(phone)])
        XCTAssertEqual(proved["phone_verified"], true)
    }

    /// The seed flow's SMS step on `client`: a code to the session's phone, read from the outbox
    /// and checked. Returns the check's answer (`phone_verified: true` the first time).
    @discardableResult
    func passSMSFactor(_ client: LineClient, session: String) throws -> JSON {
        let started = try client.result("verification.start", ["session": .string(session), "channel": "sms"])
        let requestID = try XCTUnwrap(started["request_id"]?.stringValue)
        return try client.result("verification.check", [
            "session": .string(session), "request_id": .string(requestID), "code": .string(try code(for: requestID)),
        ])
    }
}
