import Foundation
import LineProtocol
import RPC
import XCTest

/// Two sessions of one user through the gateway with every real executable: the owner's, at
/// aal 2, and a password thief's on a new device, which still owes its SMS code. The thief's
/// login code neither blocks the owner's transfer code nor tells the thief that one is pending.
final class OwingSessionCodesEndToEndTests: StackTestCase {
    static let password = "correct horse battery"

    /// The owner (her phone proved, aal 2, money in checking) and the thief's session, owing `sms`.
    private func ownerAndThief(_ gateway: LineClient, _ username: String) throws -> (owner: JSON, thief: JSON) {
        let user = try gateway.result("identity.register", [
            "username": .string(username), "password": .string(Self.password), "email": .string("\(username)@example.com"),
            "phone": "+15555550142",
        ])
        let owner = try XCTUnwrap(try login(gateway, username, device: "owner-phone")["session"])
        try passLoginFactor(gateway, session: owner)
        _ = try direct("accounts").result("accounts.deposit", [
            "user_id": try XCTUnwrap(user["user_id"]), "account": "checking", "amount": 10_000, "idempotency_key": "d-1",
        ])
        let stolen = try login(gateway, username, device: "thief-laptop")
        XCTAssertEqual(stolen["required_factors"], ["sms"])
        return (owner, try XCTUnwrap(stolen["session"]))
    }

    private func login(_ gateway: LineClient, _ username: String, device: String) throws -> JSON {
        try gateway.result("identity.login", ["username": .string(username), "password": .string(Self.password), "device_id": .string(device)])
    }

    private func transfer(_ gateway: LineClient, _ session: JSON, key: String) throws -> RPCResponse {
        try gateway.call("accounts.transfer", [
            "session": session, "from": "checking", "to": "saving", "amount": 2_500, "idempotency_key": .string(key),
        ])
    }

    func testTheThiefsLoginCodeDoesNotBlockTheOwnersTransfer() throws {
        let gateway = try gateway()
        let (owner, thief) = try ownerAndThief(gateway, "fern")
        let login = try gateway.result("verification.start", ["session": thief, "channel": "sms"])
        XCTAssertEqual(login["purpose"], "login")

        let ticket = try transfer(gateway, owner, key: "t-1").outcome.get()
        let requestID = try XCTUnwrap(ticket["request_id"]?.stringValue)
        XCTAssertNotEqual(.string(requestID), login["request_id"])
        let done = try gateway.result("accounts.confirm", [
            "session": owner, "transfer_id": try XCTUnwrap(ticket["transfer_id"]), "code": .string(try code(for: requestID)),
        ])
        XCTAssertEqual(done["status"], "done")
    }

    func testTheThiefNeverLearnsThatATransferIsPending() throws {
        let gateway = try gateway()
        let (owner, thief) = try ownerAndThief(gateway, "gale")
        let ticket = try transfer(gateway, owner, key: "t-1").outcome.get()
        let transferCode = try XCTUnwrap(ticket["request_id"])

        let started = try gateway.call("verification.start", ["session": thief, "channel": "sms"])
        if case .failure(let error) = started.outcome {
            XCTAssertNotEqual(error.data?["request_id"], transferCode, "the owner's transfer code is named to the thief")
        }
        let login = try started.outcome.get()
        XCTAssertNotEqual(login["request_id"], transferCode)
        // A second start names the thief's own code, which the thief may cancel.
        let busy = assertError(try gateway.call("verification.start", ["session": thief, "channel": "sms"]), "concurrent_verification")
        XCTAssertEqual(busy?.data?["request_id"], login["request_id"])
        XCTAssertEqual(try gateway.result("verification.cancel", ["session": thief, "request_id": login["request_id"]!]), ["status": "cancelled"])
        // And the owner's transfer is untouched.
        assertError(try gateway.call("verification.cancel", ["session": thief, "request_id": transferCode]), "not_found")
        let done = try gateway.result("accounts.confirm", [
            "session": owner, "transfer_id": try XCTUnwrap(ticket["transfer_id"]),
            "code": .string(try code(for: transferCode.stringValue ?? "")),
        ])
        XCTAssertEqual(done["status"], "done")
    }
}
