import Foundation
import LineProtocol
import ServiceKit
import XCTest

/// The seed app's transfer flow through the gateway with every real service: register, log in,
/// transfer, read the SMS (outbox) that names the amount, confirm, see the balances moved.
/// Skips itself while identity or verification are still placeholders.
final class AccountsStackTests: StackTestCase {
    private func signIn(_ gateway: LineClient, username: String, phone: String) throws -> (session: String, userID: String) {
        let registered = try gateway.call("identity.register", [
            "username": .string(username), "password": "Tr0ub4dor&3-horse-staple", "email": .string("\(username)@example.com"),
            "phone": .string(phone),
        ])
        guard case .success(let user) = registered.outcome, let userID = user["user_id"]?.stringValue else {
            throw XCTSkip("identity.register is not available yet: \(registered.outcome)")
        }
        let login = try gateway.result("identity.login", [
            "username": .string(username), "password": "Tr0ub4dor&3-horse-staple", "device_id": "iphone-1",
        ])
        return (try XCTUnwrap(login["session"]?.stringValue), userID)
    }

    private func smsCode(for requestID: String) throws -> (code: String, text: String) {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if let text = outbox().last(where: { $0["request_id"]?.stringValue == requestID })?["text"]?.stringValue {
                let expression = try NSRegularExpression(pattern: "\\b(\\d{4,10})\\b")
                let match = try XCTUnwrap(expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)), text)
                return (String(text[Range(match.range(at: 1), in: text)!]), text)
            }
            usleep(50_000)
        }
        throw XCTSkip("no SMS for \(requestID): verification is not available yet")
    }

    func testSeedTransferFlowThroughTheGateway() throws {
        let gateway = try gateway()
        let (session, userID) = try signIn(gateway, username: "alice\(UInt32.random(in: 0...UInt32.max))", phone: "+15555550142")
        let accounts = try direct("accounts")
        for (account, amount) in [("checking", 500_000), ("saving", 1_000_000)] as [(String, Int64)] {
            _ = try accounts.result("accounts.deposit", [
                "user_id": .string(userID), "account": .string(account), "amount": .int(amount), "idempotency_key": .string("demo-\(account)"),
            ])
        }
        assertError(try gateway.call("accounts.deposit", ["user_id": .string(userID), "account": "checking", "amount": 1, "idempotency_key": "x"]),
                    "method_not_found")
        assertError(try gateway.call("accounts.audit", [:]), "method_not_found")

        let ticket = try gateway.result("accounts.transfer", [
            "session": .string(session), "from": "checking", "to": "saving", "amount": 500_000, "idempotency_key": "seed-1",
        ])
        XCTAssertEqual(ticket["status"], "pending")
        let transferID = try XCTUnwrap(ticket["transfer_id"]?.stringValue)
        let requestID = try XCTUnwrap(ticket["request_id"]?.stringValue)
        let (code, text) = try smsCode(for: requestID)
        XCTAssertTrue(text.contains("5,000.00") || text.contains("5000.00"), "the SMS names the amount: \(text)")

        let wrong = code == "000000" ? "111111" : "000000"
        assertError(try gateway.call("accounts.confirm", ["session": .string(session), "transfer_id": .string(transferID), "code": .string(wrong)]),
                    "invalid_code")
        let done = try gateway.result("accounts.confirm", [
            "session": .string(session), "transfer_id": .string(transferID), "code": .string(code),
        ])
        XCTAssertEqual(done["status"], "done")
        let balances = try gateway.result("accounts.balances", ["session": .string(session)])
        XCTAssertEqual(balances["accounts"]?.arrayValue?.map { $0["balance"] }, [0, 1_500_000], "the exact balance moved")
        let history = try gateway.result("accounts.history", ["session": .string(session), "limit": 2])
        XCTAssertEqual(history["entries"]?.arrayValue?.map { $0["transfer_id"] }, [.string(transferID), .string(transferID)])

        // A second user sees nothing of the first one's transfer.
        let (other, _) = try signIn(gateway, username: "bob\(UInt32.random(in: 0...UInt32.max))", phone: "+15555550143")
        assertError(try gateway.call("accounts.confirm", ["session": .string(other), "transfer_id": .string(transferID), "code": .string(code)]),
                    "not_found")
        XCTAssertEqual(try accounts.result("accounts.audit", [:]), ["ok": true, "breaches": []])
    }
}
