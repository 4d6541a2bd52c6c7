import Foundation
import LineProtocol
import RPC
import StackLauncher
import TestSupport
import XCTest

/// The account's mails through a real SMTP server (`interop/smtp_server.py`, STARTTLS with
/// AUTH), sent by the real identity executable on the whole stack: every kind of account mail
/// (links, notices, a Russian one with its encoded subject) up to the deletion's last. Skipped
/// unless `LATCHKEY_SMTP_INTEROP=1`; `interop/smtp_check.py` runs it and then parses each mail
/// with Python's `email` package.
final class AccountMailSMTPInteropTests: StackTestCase {
    static let password = "correct horse battery"

    override func stackOptions(_ options: inout Stack.Options) {
        let environment = ProcessInfo.processInfo.environment
        guard environment["LATCHKEY_SMTP_INTEROP"] == "1", let directory = environment["LATCHKEY_SMTP_INTEROP_DIR"],
            let text = try? String(contentsOfFile: directory + "/server.json", encoding: .utf8), let info = try? JSONParser.parse(text),
            let port = info["ports"]?["starttls"]?.intValue, let user = info["user"]?.stringValue, let password = info["password"]?.stringValue,
            let caFile = info["ca_file"]?.stringValue
        else { return }
        options.environment["LATCHKEY_ERASURE_POLL_MS"] = "20"
        let escaped = password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? password
        options.serviceEnvironment["identity"] = [
            "LATCHKEY_DELIVERY": "smtp", "LATCHKEY_SMTP_URL": "smtp://\(user):\(escaped)@localhost:\(port)?starttls=required",
            "LATCHKEY_SMTP_CA_FILE": caFile, "LATCHKEY_MAIL_FROM": "Latchkey <no-reply@latchkey.test>",
            "LATCHKEY_PUBLIC_URL": "https://bank.example",
        ]
    }

    func testEveryAccountMailGoesThroughSMTP() throws {
        guard ProcessInfo.processInfo.environment["LATCHKEY_SMTP_INTEROP"] == "1" else {
            throw XCTSkip("set LATCHKEY_SMTP_INTEROP=1 (run interop/smtp_check.py)")
        }
        let directory = try XCTUnwrap(ProcessInfo.processInfo.environment["LATCHKEY_SMTP_INTEROP_DIR"])
        let gateway = try gateway()
        let identity = try direct("identity")
        let received = { (try? FileManager.default.contentsOfDirectory(atPath: directory + "/messages"))?.filter { $0.hasSuffix(".eml") } ?? [] }
        let before = received().count
        _ = try gateway.result("identity.register", [
            "username": "nina", "password": .string(Self.password), "email": "nina@example.com", "phone": "+15555550100",
        ])
        let userID = try XCTUnwrap(try identity.result("identity.find_by_username", ["username": "nina"])["user_id"])
        _ = try identity.result("identity.operator_verify_email", ["user_id": userID])
        let login = try appLogin(gateway, "nina", password: Self.password, device: "iphone-1")
        _ = try identity.result("identity.elevate", ["session_id": try XCTUnwrap(login["session_id"]), "factor": "sms"])
        let session = try XCTUnwrap(login["session"])
        _ = try gateway.result("identity.change_password", [
            "session": session, "current_password": .string(Self.password), "new_password": "a much longer passphrase",
        ])
        _ = try gateway.result("identity.change_email", ["session": session, "email": "nina@example.org"])
        // Someone registering with the taken address; a phone change; a new set of recovery codes;
        // a sign-in on a second device; a Russian account's verification link.
        _ = try gateway.result("identity.register", [
            "username": "mallory", "password": .string(Self.password), "email": "nina@example.com", "phone": "+15555550111",
        ])
        _ = try gateway.result("identity.change_phone", ["session": session, "phone": "+15555550199"])
        _ = try gateway.result("identity.recovery_codes", ["session": session])
        let tablet = try appLogin(gateway, "nina", password: "a much longer passphrase", device: "ipad-1")
        _ = try identity.result("identity.elevate", ["session_id": try XCTUnwrap(tablet["session_id"]), "factor": "sms"])
        _ = try gateway.result("identity.register", [
            "username": "olga", "password": .string(Self.password), "email": "olga@example.com", "phone": "+15555550122", "locale": "ru",
        ])
        // A change to an address another account has: that address is told, this one refused.
        _ = try gateway.result("identity.change_email", ["session": session, "email": "olga@example.com"])
        _ = try gateway.result("identity.delete_account", ["session": session, "password": "a much longer passphrase"])
        // Registration's link, the password notice, the new address's link, the old address's
        // notice, the sign-up attempt, the phone notice, the recovery codes notice, the new
        // device, the Russian link, the taken address's two notices, the deletion's last mail.
        XCTAssertTrue(eventually(timeoutSeconds: 30) { received().count >= before + 12 }, "mails received: \(received().count - before)")
        XCTAssertEqual(outbox().filter { $0["channel"] == "email" }.count, 0, "SMTP delivery must not write mail to the outbox")
        XCTAssertEqual(outbox().map { $0["to"] }, ["+15555550100"], "only the old number's SMS notice, which verification writes there")
    }
}
