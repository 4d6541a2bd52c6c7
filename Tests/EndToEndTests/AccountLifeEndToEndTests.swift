import Foundation
import LineProtocol
import RPC
import TestSupport
import XCTest

/// The account's own changes on the real stack, through both doors of the gateway: the
/// registration mail's link verifies the address over HTTP (curl), a password change ends the
/// other sessions at once (also ones the gateway had just seen), and an e-mail change is
/// confirmed and undone with the links the outbox received.
final class AccountLifeEndToEndTests: StackTestCase {
    static let password = "correct horse battery"

    /// The newest mail to `address` whose text has a link to `page`, and that link's token.
    private func linkToken(to address: String, page: String) throws -> String {
        var token: String?
        XCTAssertTrue(eventually {
            let mail = outbox().last { $0["to"]?.stringValue == address && ($0["text"]?.stringValue ?? "").contains("://\(page)?token=") }
            token = mail?["text"]?.stringValue.flatMap { text in text.firstMatch(of: /lke_[A-Za-z0-9_-]{43}/).map { String($0.output) } }
            return token != nil
        }, "no \(page) link to \(address) in the outbox")
        return try XCTUnwrap(token)
    }

    private func httpPost(_ path: String, _ body: JSON, bearer: String? = nil) throws -> (status: Int, body: JSON?) {
        let endpoint = try XCTUnwrap(stack.httpGateway)
        var arguments = ["-H", "Content-Type: application/json", "--data", body.text]
        if let bearer { arguments += ["-H", "Authorization: Bearer \(bearer)"] }
        let response = try Curl.run(arguments + ["http://\(endpoint.description)\(path)"])
        return (response.status, try? JSONParser.parse(response.body))
    }

    /// A password login on `device` lifted to aal 2 as a passed code would (identity.elevate).
    private func steppedUp(_ gateway: LineClient, device: String, password: String = AccountLifeEndToEndTests.password) throws -> JSON {
        let login = try appLogin(gateway, "alice", password: password, device: device)
        let session = try XCTUnwrap(login["session"])
        _ = try direct("identity").result("identity.elevate", ["session_id": try XCTUnwrap(login["session_id"]), "factor": "sms"])
        return session
    }

    private func register(_ gateway: LineClient) throws {
        _ = try gateway.result("identity.register", [
            "username": "alice", "password": .string(Self.password), "email": "alice@example.com", "phone": "+15555550100",
        ])
    }

    func testTheRegistrationLinkVerifiesTheAddressOverHTTPOnce() throws {
        let gateway = try gateway()
        try register(gateway)
        let token = try linkToken(to: "alice@example.com", page: "verify-email")
        let verified = try httpPost("/v1/identity/verify_email", ["token": .string(token)])
        XCTAssertEqual(verified.status, 200, "\(String(describing: verified.body))")
        XCTAssertEqual(verified.body?["result"]?["email"], "alice@example.com")
        let again = try httpPost("/v1/identity/verify_email", ["token": .string(token)])
        XCTAssertEqual(again.status, 400)
        XCTAssertEqual(again.body?["error"]?["data"]?["reason"], "invalid_token")

        let session = try steppedUp(gateway, device: "iphone-1")
        XCTAssertEqual(try gateway.result("identity.preferences", ["session": session])["email_verified"], true)
    }

    func testAPasswordChangeEndsTheOtherSessionsAtOnceThroughTheGateway() throws {
        let gateway = try gateway()
        try register(gateway)
        let other = try steppedUp(gateway, device: "ipad-2")
        let session = try steppedUp(gateway, device: "iphone-1")
        // Both sessions are in the gateway's cache now (it checks sessions for other services' methods).
        XCTAssertNotNil(try gateway.result("accounts.balances", ["session": other])["accounts"])
        XCTAssertNotNil(try gateway.result("accounts.balances", ["session": session])["accounts"])

        let changed = try httpPost(
            "/v1/identity/change_password", ["current_password": .string(Self.password), "new_password": "a much longer passphrase"],
            bearer: session.stringValue)
        XCTAssertEqual(changed.status, 200, "\(String(describing: changed.body))")
        XCTAssertEqual(changed.body?["result"]?["sessions_ended"], 1)

        assertError(try gateway.call("accounts.balances", ["session": other]), "unauthenticated")
        XCTAssertNotNil(try gateway.result("identity.sessions", ["session": session])["sessions"], "the caller stays signed in")
        assertError(try gateway.call("identity.login", ["username": "alice", "password": .string(Self.password), "device_id": "mac"]), "invalid_credentials")
        XCTAssertTrue(eventually { outbox().contains { ($0["subject"]?.stringValue ?? "").contains("password was changed") } })
    }

    func testAnEmailChangeIsConfirmedAndThenUndoneByTheOldAddress() throws {
        let gateway = try gateway()
        try register(gateway)
        _ = try gateway.result("identity.verify_email", ["token": .string(try linkToken(to: "alice@example.com", page: "verify-email"))])
        let session = try steppedUp(gateway, device: "iphone-1")

        _ = try gateway.result("identity.change_email", ["session": session, "email": "alice@example.org"])
        let confirm = try linkToken(to: "alice@example.org", page: "email-change/confirm")
        let revert = try linkToken(to: "alice@example.com", page: "email-change/revert")
        XCTAssertEqual(try gateway.result("identity.confirm_email_change", ["token": .string(confirm)])["email"], "alice@example.org")
        XCTAssertEqual(try gateway.result("identity.preferences", ["session": session])["email"], "alice@example.org")

        let reverted = try httpPost("/v1/identity/revert_email_change", ["token": .string(revert)])
        XCTAssertEqual(reverted.body?["result"]?["email"], "alice@example.com", "\(String(describing: reverted.body))")
        assertError(try gateway.call("identity.preferences", ["session": session]), "unauthenticated")
        let restored = try steppedUp(gateway, device: "iphone-1")
        let preferences = try gateway.result("identity.preferences", ["session": restored])
        XCTAssertEqual(preferences["email"], "alice@example.com")
        XCTAssertEqual(preferences["email_verified"], true)
    }

    func testAfterAPhoneChangeSMSConfirmsNoTransfer() throws {
        let gateway = try gateway()
        try register(gateway)
        let session = try steppedUp(gateway, device: "iphone-1")
        let transfer: [String: JSON] = ["session": session, "from": "checking", "to": "saving", "amount": 100, "idempotency_key": "k-1"]
        assertError(try gateway.call("accounts.transfer", .object(transfer)), "insufficient_funds")  // allowed to start: no money yet

        XCTAssertEqual(try gateway.result("identity.change_phone", ["session": session, "phone": "+15555550199"])["phone_verified"], false)
        let held = assertError(try gateway.call("accounts.transfer", .object(transfer)), "conflict")
        XCTAssertEqual(held?.data?["detail"], "phone_recently_changed")
        XCTAssertNotNil(held?.data?["retry_after"]?.intValue)
        XCTAssertEqual(try direct("identity").result("identity.user", ["user_id": try XCTUnwrap(
            try direct("identity").result("identity.introspect", ["session": session])["user_id"])])["phone"], "+15555550199")
    }

    /// Verification sends the old number its notice, once, also when it was down at the change.
    func testTheOldNumberGetsItsSMSNoticeOnceEvenAcrossAKillOfVerification() throws {
        let gateway = try gateway()
        try register(gateway)
        let session = try steppedUp(gateway, device: "iphone-1")
        stack.kill("verification")
        XCTAssertEqual(try gateway.result("identity.change_phone", ["session": session, "phone": "+15555550199"])["phone_verified"], false)
        try stack.restart("verification")
        let notices = { self.outbox().filter { $0["channel"] == "sms" && $0["to"] == "+15555550100" && ($0["text"]?.stringValue ?? "").contains("no longer") } }
        XCTAssertTrue(eventually { notices().count == 1 }, "the old number's notice")
        XCTAssertFalse(eventually(timeoutSeconds: 1) { notices().count > 1 }, "sent once")
        XCTAssertFalse(outbox().contains { $0["to"] == "+15555550199" && ($0["text"]?.stringValue ?? "").contains("no longer") }, "not to the new one")
    }

    /// The language given at registration words identity's mails and reset's, which asks identity for it.
    func testTheAccountsLanguageWordsEveryServicesMails() throws {
        let gateway = try gateway()
        _ = try gateway.result("identity.register", [
            "username": "olga", "password": .string(Self.password), "email": "olga@example.com", "phone": "+15555550100", "locale": "ru",
        ])
        XCTAssertEqual(try gateway.result("reset.request", ["email": "olga@example.com"])["ok"], true)
        let subjects = { Set(self.outbox().filter { $0["to"] == "olga@example.com" }.compactMap { $0["subject"]?.stringValue }) }
        XCTAssertTrue(eventually { subjects() == ["Подтвердите адрес электронной почты для Latchkey", "Сброс пароля Latchkey"] }, "\(subjects())")
    }
}
