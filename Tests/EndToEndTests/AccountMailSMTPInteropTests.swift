import Foundation
import LineProtocol
import RPC
import StackLauncher
import TestSupport
import XCTest

/// The account's mails through a real SMTP server (`interop/smtp_server.py`, STARTTLS with
/// AUTH), sent by the real identity executable on the whole stack: registration's link, the
/// password change's notice, an e-mail change's two mails, and the deletion's last mail. Skipped
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
        _ = try gateway.result("identity.delete_account", ["session": session, "password": "a much longer passphrase"])
        // Registration's link, the password notice, the new address's link, the old address's
        // notice, the deletion's last mail.
        XCTAssertTrue(eventually(timeoutSeconds: 30) { received().count >= before + 5 }, "mails received: \(received().count - before)")
        XCTAssertTrue(outbox().isEmpty, "SMTP delivery must not write the outbox")
    }
}
