@testable import Delivery
import Foundation
import LineProtocol
import Runtime
import XCTest


/// Sends through the SMTP client to a real server (`interop/smtp_server.py`, aiosmtpd) in every
/// mode. Skipped unless `LATCHKEY_SMTP_INTEROP=1` and `LATCHKEY_SMTP_INTEROP_DIR` points at the
/// running server's directory; `interop/smtp_check.py` does all of that and then parses what
/// the server received with Python's `email` package.
final class SMTPInteropTests: XCTestCase {
    struct ServerInfo {
        let ports: [String: Int]
        let caFile: String
        let user: String
        let password: String
    }

    private var info: ServerInfo!

    override func setUpWithError() throws {
        let environment = ProcessInfo.processInfo.environment
        guard environment["LATCHKEY_SMTP_INTEROP"] == "1", let directory = environment["LATCHKEY_SMTP_INTEROP_DIR"] else {
            throw XCTSkip("set LATCHKEY_SMTP_INTEROP=1 (run interop/smtp_check.py)")
        }
        let text = try String(contentsOfFile: directory + "/server.json", encoding: .utf8)
        let json = try JSONParser.parse(text)
        var ports: [String: Int] = [:]
        for (name, value) in json["ports"]?.objectValue ?? [:] { ports[name] = Int(value.intValue ?? 0) }
        info = ServerInfo(
            ports: ports, caFile: try XCTUnwrap(json["ca_file"]?.stringValue),
            user: try XCTUnwrap(json["user"]?.stringValue), password: try XCTUnwrap(json["password"]?.stringValue))
    }

    private func encoded(_ text: String) -> String {
        text.utf8.map { byte -> String in
            let scalar = Unicode.Scalar(byte)
            return (scalar.properties.isAlphabetic && byte < 0x80) || ("0"..."9").contains(Character(scalar)) ? String(scalar) : String(format: "%%%02X", byte)
        }.joined()
    }

    private func provider(_ url: String, caFile: String?) throws -> SMTPProvider {
        var settings = SMTPClient.Settings(url: try SMTPURL(url))
        settings.caFile = caFile
        settings.maxAttempts = 1
        settings.replyTimeoutMilliseconds = 5000
        settings.connectTimeoutMilliseconds = 5000
        return SMTPProvider(
            client: try SMTPClient(settings: settings), from: MailAddress(displayName: "Latchkey Interop", address: "no-reply@latchkey.test"),
            logger: Logger(service: "interop", sink: LogSink()))
    }

    /// The message every mode sends: a reset-style mail with a deep link, a universal link,
    /// lines that need dot-stuffing, non-ASCII text and a long line that needs soft breaks.
    static func message(mode: String) -> OutgoingMessage {
        let token = "lkr_interop-\(mode)-0123456789abcdefghijklmnopqrstuv"
        let text = """
            Hello,

            Open this link to choose a new password:

            latchkey://reset-password?token=\(token)
            https://example.com/reset?token=\(token)
            .hidden line that starts with a dot
            ..two dots
            .
            Ça expire dans 30 minutes — ✓
            \(String(repeating: "long line ", count: 20))end
            """
        let html = "<p>Open <a href=\"latchkey://reset-password?token=\(token)\">this link</a>.</p>\n.dot line in html\n<p>Ça ✓</p>"
        return OutgoingMessage(channel: .email, to: "alice@example.com", subject: "Interop \(mode): réinitialisation ✓", text: text, html: html, requestID: "interop-\(mode)")
    }

    private func send(mode: String, url: String, caFile: String?) throws {
        try provider(url, caFile: caFile).deliver(Self.message(mode: mode))
    }

    func testPlain() throws {
        try send(mode: "plain", url: "smtp://127.0.0.1:\(info.ports["plain"]!)?starttls=never", caFile: nil)
    }

    func testStartTLSRequired() throws {
        try send(mode: "starttls", url: "smtp://localhost:\(info.ports["starttls"]!)?starttls=required", caFile: info.caFile)
    }

    func testStartTLSOpportunistic() throws {
        try send(mode: "opportunistic", url: "smtp://localhost:\(info.ports["starttls"]!)", caFile: info.caFile)
    }

    func testAuthPlainOverStartTLS() throws {
        let credentials = "\(encoded(info.user)):\(encoded(info.password))@"
        try send(mode: "auth_plain", url: "smtp://\(credentials)localhost:\(info.ports["starttls"]!)?starttls=required&auth=plain", caFile: info.caFile)
    }

    func testAuthLoginOverStartTLS() throws {
        let credentials = "\(encoded(info.user)):\(encoded(info.password))@"
        try send(mode: "auth_login", url: "smtp://\(credentials)localhost:\(info.ports["starttls"]!)?starttls=required&auth=login", caFile: info.caFile)
    }

    func testImplicitTLSWithAuthByIPAddress() throws {
        let credentials = "\(encoded(info.user)):\(encoded(info.password))@"
        try send(mode: "smtps", url: "smtps://\(credentials)127.0.0.1:\(info.ports["smtps"]!)", caFile: info.caFile)
    }

    func testUntrustedCertificateIsRefused() throws {
        // The system store does not know the test CA.
        XCTAssertThrowsError(try send(mode: "untrusted", url: "smtp://localhost:\(info.ports["starttls"]!)?starttls=required", caFile: nil)) { error in
            let failure = error as? DeliveryError
            XCTAssertEqual(failure?.permanent, true)
            XCTAssertTrue(failure?.detail.contains("certificate verification failed") == true, failure?.detail ?? "")
        }
    }

    func testCertificateForAnotherHostIsRefused() throws {
        XCTAssertThrowsError(try send(mode: "wrongname", url: "smtps://127.0.0.1:\(info.ports["wrongname"]!)", caFile: info.caFile)) { error in
            let failure = error as? DeliveryError
            XCTAssertEqual(failure?.permanent, true)
            XCTAssertTrue(failure?.detail.contains("certificate verification failed") == true, failure?.detail ?? "")
        }
        XCTAssertThrowsError(try send(mode: "wrongname", url: "smtp://127.0.0.1:\(info.ports["starttls"]!)?starttls=required", caFile: nil))
    }

    func testWrongPasswordIsAClearPermanentFailure() throws {
        XCTAssertThrowsError(try send(mode: "badauth", url: "smtp://\(encoded(info.user)):wrong@localhost:\(info.ports["starttls"]!)?starttls=required", caFile: info.caFile)) { error in
            let failure = error as? DeliveryError
            XCTAssertEqual(failure?.permanent, true)
            XCTAssertTrue(failure?.detail.contains("AUTH PLAIN: server replied 535") == true, failure?.detail ?? "")
            XCTAssertFalse(failure?.detail.contains("wrong") == true)
        }
    }

    func testNoCredentialsOverPlainText() throws {
        let credentials = "\(encoded(info.user)):\(encoded(info.password))@"
        XCTAssertThrowsError(try send(mode: "cleartext_auth", url: "smtp://\(credentials)127.0.0.1:\(info.ports["plain"]!)", caFile: nil)) { error in
            XCTAssertTrue((error as? DeliveryError)?.detail.contains("without TLS") == true)
        }
    }
}
