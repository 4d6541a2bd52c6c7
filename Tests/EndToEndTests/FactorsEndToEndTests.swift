import Foundation
import LineProtocol
import RPC
import Secrets
import XCTest

/// Second factors through the gateway with every real executable: a transfer confirmed by the
/// session's device key (no SMS), an authenticator app and recovery codes as second factors,
/// each across a `kill -9` and a restart of the service that holds its state.
final class FactorsEndToEndTests: StackTestCase {
    static let password = "correct horse battery"

    /// Registers, logs in on `device` and passes the SMS factor (which proves the phone).
    private func signIn(_ gateway: LineClient, _ username: String, device: String) throws -> JSON {
        _ = try gateway.result("identity.register", [
            "username": .string(username), "password": .string(Self.password), "email": .string("\(username)@example.com"),
            "phone": "+15555550142",
        ])
        let session = try XCTUnwrap(try login(gateway, username, device: device)["session"])
        try passLoginFactor(gateway, session: session)
        return session
    }

    private func login(_ gateway: LineClient, _ username: String, device: String) throws -> JSON {
        try appLogin(gateway, username, password: Self.password, device: device)
    }

    func testATransferConfirmedByTheDeviceKeySendsNoSMSAndSurvivesAKill9() throws {
        let gateway = try gateway()
        let phone = SimulatedDevice(id: "iphone-1")
        let session = try signIn(gateway, "joan", device: phone.id)
        _ = try gateway.result("identity.enroll_key", ["session": session, "device_id": .string(phone.id), "public_key": phone.publicKey, "protection": "biometry"])
        let userID = try XCTUnwrap(try direct("identity").result("identity.introspect", ["session": session])["user_id"])
        _ = try direct("accounts").result("accounts.deposit", ["user_id": userID, "account": "checking", "amount": 500_000, "idempotency_key": "d-1"])
        // Only texts count: the mail about the new key may reach the outbox at any moment.
        let textsBefore = outbox().filter { $0["channel"]?.stringValue == "sms" }.count

        let ticket = try gateway.result("accounts.transfer", [
            "session": session, "from": "checking", "to": "saving", "amount": 125_000, "idempotency_key": "t-1",
            "confirm_with": "device_key", "device_id": .string(phone.id),
        ])
        XCTAssertEqual(ticket["request_id"], .null)
        let sign = try XCTUnwrap(ticket["sign"])
        let text = String(decoding: Base64URL.decode(sign.stringValue ?? "") ?? [], as: UTF8.self)
        XCTAssertTrue(text.contains("\namount=125000\n") && text.contains("\nto=saving\n") && text.hasSuffix("challenge=\(ticket["challenge"]?.stringValue ?? "?")"), text)

        stack.kill("accounts")
        try stack.restart("accounts")

        let confirm = { (signature: JSON) throws -> RPCResponse in
            try gateway.call("accounts.confirm", ["session": session, "transfer_id": ticket["transfer_id"]!, "device_id": .string(phone.id), "signature": signature])
        }
        let forged = SimulatedDevice(id: phone.id).sign(sign)
        XCTAssertEqual(assertError(try confirm(forged), "invalid_code")?.data?["attempts_left"], 2)
        let done = try confirm(phone.sign(sign)).outcome.get()
        XCTAssertEqual(done["accounts"]?.arrayValue?.map { $0["balance"] }, [375_000, 125_000])
        XCTAssertEqual(try confirm(phone.sign(sign)).outcome.get()["accounts"], done["accounts"], "a repeat moves nothing")
        XCTAssertEqual(outbox().filter { $0["channel"]?.stringValue == "sms" }.count, textsBefore, "no SMS for a device-key transfer")
        let events = try gateway.result("identity.activity", ["session": session, "limit": 10])["events"]?.arrayValue ?? []
        let keyEvents = events.filter { $0["outcome"] == "device_key" }.map { $0["event"]?.stringValue ?? "" }
        XCTAssertEqual(Array(keyEvents.prefix(2)), ["factor.passed", "factor.failed"])

        // A key revoked meanwhile confirms nothing.
        let second = try gateway.result("accounts.transfer", [
            "session": session, "from": "checking", "to": "saving", "amount": 1, "idempotency_key": "t-2",
            "confirm_with": "device_key", "device_id": .string(phone.id),
        ])
        let keyID = try XCTUnwrap(try gateway.result("identity.keys", ["session": session])["keys"]?.arrayValue?.first?["key_id"])
        _ = try gateway.result("identity.revoke_key", ["session": session, "key_id": keyID])
        let refused = assertError(
            try gateway.call("accounts.confirm", [
                "session": session, "transfer_id": second["transfer_id"]!, "device_id": .string(phone.id), "signature": phone.sign(second["sign"]!),
            ]), "not_found")
        XCTAssertEqual(refused?.data?["detail"], "key_revoked")
        XCTAssertEqual(try direct("accounts").result("accounts.audit", [:])["ok"], true)
    }

    func testAnAuthenticatorAppAndRecoveryCodesStandInForSMSAcrossARestartOfIdentity() throws {
        let gateway = try gateway()
        let session = try signIn(gateway, "kim", device: "iphone-1")
        let enrolled = try gateway.result("identity.totp_enroll", ["session": session])
        let secret = try XCTUnwrap(enrolled["secret"]?.stringValue)
        XCTAssertEqual(enrolled["uri"]?.stringValue?.hasPrefix("otpauth://totp/Latchkey:kim?secret=\(secret)&issuer=Latchkey"), true)
        let refusedParam = assertError(try gateway.call("identity.totp_activate", ["session": session, "code": "123456", "cod": "1"]), "invalid_params")
        XCTAssertEqual(refusedParam?.data?["field"], "cod")
        XCTAssertEqual(try gateway.result("identity.totp_activate", ["session": session, "code": .string(try totp(secret))]), ["ok": true])
        let codes = try XCTUnwrap(try gateway.result("identity.recovery_codes", ["session": session])["codes"]?.arrayValue)
        XCTAssertEqual(codes.count, 10)

        stack.kill("identity")
        try stack.restart("identity")  // its key file stays: the sealed secret still opens

        let again = try login(gateway, "kim", device: "iphone-1")
        XCTAssertEqual(again["required_factors"], ["totp"])
        let next = try totp(secret, offsetSteps: 1)  // the current step was spent on activation
        XCTAssertEqual(try gateway.result("identity.totp_verify", ["session": again["session"]!, "code": .string(next)])["aal"], 2)
        XCTAssertEqual(try gateway.result("accounts.balances", ["session": again["session"]!])["accounts"]?.arrayValue?.count, 2)
        let other = try login(gateway, "kim", device: "iphone-1")
        XCTAssertEqual(assertError(try gateway.call("identity.totp_verify", ["session": other["session"]!, "code": .string(next)]), "invalid_code")?
            .data?["attempts_left"], 2, "replayed")

        let lost = try login(gateway, "kim", device: "borrowed-phone")
        XCTAssertEqual(lost["required_factors"], ["totp", "sms"])
        let recovered = try gateway.result("identity.recovery_verify", ["session": lost["session"]!, "code": codes[3]])
        XCTAssertEqual(recovered, ["aal": 2, "remaining": 9])
        assertError(try gateway.call("identity.recovery_verify", ["session": other["session"]!, "code": codes[3]]), "invalid_code")
        let preferences = try gateway.result("identity.preferences", ["session": lost["session"]!])
        XCTAssertEqual(preferences["factors"], ["sms", "totp"])
        XCTAssertEqual(preferences["recovery_codes_left"], 9)
        let events = try gateway.result("identity.activity", ["session": lost["session"]!, "limit": 30])["events"]?.arrayValue ?? []
        XCTAssertTrue(events.contains { $0["event"] == "recovery_code.used" && $0["outcome"] == "left_9" })
        // And an e-mail tells the owner how many are left, never the code itself.
        let notice = try waitForMail(to: "kim@example.com", subjectContaining: "recovery code was used")
        XCTAssertTrue(notice["text"]?.stringValue?.contains("9 recovery codes are left") ?? false, "\(notice)")
        XCTAssertFalse(notice.text.contains(codes[3].stringValue ?? "?"), "the code is never mailed")
        let log = (try? String(contentsOfFile: stack.member("identity").logPath, encoding: .utf8)) ?? ""
        XCTAssertFalse(log.isEmpty)
        XCTAssertFalse(log.contains(secret), "the secret is never logged")
    }
}
