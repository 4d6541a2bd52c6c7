import XCTest

@testable import Delivery

final class MailMessageTests: XCTestCase {
    private func render(_ message: MailMessage) -> String { String(decoding: message.rendered(), as: UTF8.self) }

    private func sample(subject: String = "Reset your password", text: String = "Hello\n.dot\nbye", html: String? = "<p>Hello</p>") -> MailMessage {
        MailMessage(
            from: MailAddress(displayName: "Latchkey", address: "no-reply@example.com"),
            to: [MailAddress(address: "alice@example.com")], subject: subject, text: text, html: html,
            dateSeconds: 1_795_969_160, messageID: "<id-1@example.com>")
    }

    func testHeadersAndMultipartAlternative() {
        let text = render(sample())
        XCTAssertTrue(text.hasPrefix("Date: Sun, 29 Nov 2026 16:19:20 +0000\r\nFrom: Latchkey <no-reply@example.com>\r\nTo: <alice@example.com>\r\nMessage-ID: <id-1@example.com>\r\nSubject: Reset your password\r\nMIME-Version: 1.0\r\n"), text)
        XCTAssertTrue(text.contains("Content-Type: multipart/alternative; boundary=\"=_lk_"))
        XCTAssertTrue(text.contains("Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nHello\r\n.dot\r\nbye\r\n"))
        XCTAssertTrue(text.contains("Content-Type: text/html; charset=utf-8"))
        XCTAssertTrue(text.hasSuffix("--\r\n"))
    }

    func testEveryLineEndsInCRLFAndStaysShort() {
        let long = String(repeating: "word ", count: 60) + "https://example.com/reset?token=lkr_" + String(repeating: "A", count: 43)
        let text = render(sample(subject: String(repeating: "Réinitialisez ", count: 8), text: long, html: "<p>\(long)</p>"))
        XCTAssertFalse(text.replacingOccurrences(of: "\r\n", with: "").contains("\n"), "bare LF")
        XCTAssertFalse(text.replacingOccurrences(of: "\r\n", with: "").contains("\r"), "bare CR")
        for line in text.components(separatedBy: "\r\n") { XCTAssertLessThanOrEqual(line.utf8.count, 78, line) }
    }

    func testNonASCIISubjectBecomesEncodedWords() {
        let text = render(sample(subject: "Сброс пароля ✓"))
        XCTAssertTrue(text.contains("Subject: =?UTF-8?B?"), text)
        XCTAssertFalse(text.contains("Сброс"))
        XCTAssertEqual(MailMessage.unstructured("plain ascii"), "plain ascii")
        XCTAssertEqual(MailMessage.encodedWords("é"), ["=?UTF-8?B?w6k=?="])
    }

    func testQuotedPrintable() {
        XCTAssertEqual(MailMessage.quotedPrintable("a=b café"), ["a=3Db caf=C3=A9"])
        XCTAssertEqual(MailMessage.quotedPrintable("trailing space \nx"), ["trailing space=20", "x"])
        let soft = MailMessage.quotedPrintable(String(repeating: "x", count: 100))
        XCTAssertEqual(soft.count, 2)
        XCTAssertEqual(soft[0], String(repeating: "x", count: 75) + "=")
        XCTAssertEqual(soft[1], String(repeating: "x", count: 25))
        XCTAssertEqual(MailMessage.quotedPrintable(String(repeating: "x", count: 76)), [String(repeating: "x", count: 76)])
    }

    func testHeaderInjectionIsImpossible() {
        let text = render(sample(subject: "hi\r\nBcc: evil@example.com"))
        XCTAssertFalse(text.contains("\r\nBcc:"))
        XCTAssertNil(MailAddress(parsing: "evil@example.com\r\nBcc: x@example.com"))
    }

    func testDisplayNames() {
        XCTAssertEqual(MailAddress(parsing: "Latchkey <no-reply@example.com>"), MailAddress(displayName: "Latchkey", address: "no-reply@example.com"))
        XCTAssertEqual(MailAddress(parsing: "no-reply@example.com")?.address, "no-reply@example.com")
        XCTAssertEqual(MailAddress(displayName: "Acme, Inc.", address: "a@example.com").headerValue, "\"Acme, Inc.\" <a@example.com>")
        XCTAssertTrue(MailAddress(displayName: "Банк", address: "a@example.com").headerValue.hasPrefix("=?UTF-8?B?"))
    }

    func testTextOnlyMessage() {
        let text = render(sample(html: nil))
        XCTAssertTrue(text.contains("Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nHello"))
        XCTAssertFalse(text.contains("multipart"))
    }

    func testMessageIDsAreUniqueAndBracketed() {
        let first = MailMessage.makeMessageID(domain: "example.com")
        XCTAssertNotEqual(first, MailMessage.makeMessageID(domain: "example.com"))
        XCTAssertTrue(first.hasPrefix("<") && first.hasSuffix("@example.com>"))
    }
}

final class SMTPURLTests: XCTestCase {
    func testPlainWithDefaults() throws {
        let url = try SMTPURL("smtp://mail.example.com")
        XCTAssertEqual(url.host, "mail.example.com")
        XCTAssertEqual(url.port, 587)
        XCTAssertEqual(url.security, .opportunistic)
        XCTAssertNil(url.username)
    }

    func testCredentialsPortAndStartTLSRequired() throws {
        let url = try SMTPURL("smtp://user%40example.com:p%40ss:w0rd@mail.example.com:2525?starttls=required&auth=login")
        XCTAssertEqual(url.username, "user@example.com")
        XCTAssertEqual(url.password, "p@ss:w0rd")
        XCTAssertEqual(url.port, 2525)
        XCTAssertEqual(url.security, .required)
        XCTAssertEqual(url.authMechanism, .login)
        XCTAssertEqual(url.description, "smtp://user@example.com@mail.example.com:2525")
        XCTAssertFalse(url.description.contains("w0rd"))
    }

    func testImplicitTLS() throws {
        let url = try SMTPURL("smtps://u:p@[::1]")
        XCTAssertEqual(url.host, "::1")
        XCTAssertEqual(url.port, 465)
        XCTAssertEqual(url.security, .implicit)
    }

    func testBadURLsSayWhatIsWrongWithoutThePassword() {
        for bad in ["http://x", "smtp://", "smtp://h:0", "smtp://h:99999", "smtp://h/path", "smtps://h?starttls=required", "smtp://h?bogus=1", "smtp://u:%zz@h"] {
            XCTAssertThrowsError(try SMTPURL(bad), bad) { error in
                XCTAssertEqual((error as? DeliveryError)?.permanent, true)
                XCTAssertFalse((error as? DeliveryError)?.detail.contains("%zz") == true)
            }
        }
    }
}
