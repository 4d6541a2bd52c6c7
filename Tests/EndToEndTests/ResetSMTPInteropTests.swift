import Foundation
import LineProtocol
import RPC
import XCTest

/// The real `reset` executable mailing through a real SMTP server (`interop/smtp_server.py`)
/// over STARTTLS with AUTH. Skipped unless `LATCHKEY_SMTP_INTEROP=1`; `interop/smtp_check.py`
/// runs it and then checks the received reset mail with Python's `email` package.
final class ResetSMTPInteropTests: ResetProcessTestCase {
    func testResetMailsGoThroughSMTP() throws {
        let environment = ProcessInfo.processInfo.environment
        guard environment["LATCHKEY_SMTP_INTEROP"] == "1", let directory = environment["LATCHKEY_SMTP_INTEROP_DIR"] else {
            throw XCTSkip("set LATCHKEY_SMTP_INTEROP=1 (run interop/smtp_check.py)")
        }
        let info = try JSONParser.parse(try String(contentsOfFile: directory + "/server.json", encoding: .utf8))
        let port = try XCTUnwrap(info["ports"]?["starttls"]?.intValue)
        let user = try XCTUnwrap(info["user"]?.stringValue)
        let password = try XCTUnwrap(info["password"]?.stringValue)
        let escaped = password.utf8.map { byte -> String in
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7a) ? String(UnicodeScalar(byte)) : String(format: "%%%02X", byte)
        }.joined()
        try startReset([
            "LATCHKEY_DELIVERY": "smtp",
            "LATCHKEY_SMTP_URL": "smtp://\(user):\(escaped)@localhost:\(port)?starttls=required",
            "LATCHKEY_SMTP_CA_FILE": try XCTUnwrap(info["ca_file"]?.stringValue),
            "LATCHKEY_MAIL_FROM": "Latchkey <no-reply@latchkey.test>",
            "LATCHKEY_RESET_LINK_TEMPLATE": "https://bank.example/reset?token={token}",
        ])
        let client = try LineClient(endpoint)
        XCTAssertEqual(try client.result("reset.request", ["email": "demo@example.com"]), ["ok": true])
        let deadline = Date().addingTimeInterval(15)
        var sent: Int64 = 0
        while sent < 1 && Date() < deadline {
            sent = try client.result("reset.metrics")["counters"]?["reset.mail_sent"]?.intValue ?? 0
            usleep(50_000)
        }
        XCTAssertEqual(sent, 1, (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")
        XCTAssertTrue(outbox().isEmpty, "SMTP delivery must not write the outbox")
    }
}
