@testable import Delivery
import Foundation
import Runtime
import ServiceKit
import XCTest


final class SMTPClientTests: XCTestCase {
    private func client(_ server: SMTPFakeServer, query: String = "?starttls=never", user: String = "", attempts: Int = 3, timeoutMilliseconds: Int = 5000) throws -> SMTPClient {
        var settings = SMTPClient.Settings(url: try SMTPURL("smtp://\(user)127.0.0.1:\(server.port)\(query)"))
        settings.maxAttempts = attempts
        settings.initialBackoffMilliseconds = 10
        settings.replyTimeoutMilliseconds = timeoutMilliseconds
        settings.connectTimeoutMilliseconds = timeoutMilliseconds
        return try SMTPClient(settings: settings)
    }

    private let message = Array("Subject: hi\r\n\r\nline one\r\n.hidden line\r\n..two dots\r\n.\r\nend\r\n".utf8)

    func testSendsTheEnvelopeAndDotStuffsTheData() throws {
        let server = try SMTPFakeServer()
        defer { server.stop() }
        try client(server).send(from: "no-reply@example.com", to: ["alice@example.com"], message: message)
        XCTAssertEqual(server.commands.prefix(4), ["EHLO localhost", "MAIL FROM:<no-reply@example.com>", "RCPT TO:<alice@example.com>", "DATA"])
        XCTAssertEqual(server.commands.last, "QUIT")
        let data = String(decoding: try XCTUnwrap(server.messages.first), as: UTF8.self)
        XCTAssertEqual(data, "Subject: hi\r\n\r\nline one\r\n..hidden line\r\n...two dots\r\n..\r\nend\r\n")
    }

    func testDotStuffingNormalisesLineEnds() {
        let stuffed = String(decoding: SMTPClient.dotStuffed(Array(".a\nb\r\n.\rc".utf8)), as: UTF8.self)
        XCTAssertEqual(stuffed, "..a\r\nb\r\n..\r\nc\r\n.\r\n")
        XCTAssertEqual(String(decoding: SMTPClient.dotStuffed([]), as: UTF8.self), ".\r\n")
    }

    func testTemporaryFailuresAreRetriedWithBackOff() throws {
        let server = try SMTPFakeServer(.init(temporaryFailures: 2))
        defer { server.stop() }
        // The back-off between the tries is RetryPolicy's, counted in DeliveryRetryPolicyTests.
        try client(server, attempts: 3).send(from: "a@example.com", to: ["b@example.com"], message: message)
        XCTAssertEqual(server.connections, 3)
        XCTAssertEqual(server.messages.count, 1)
    }

    func testTemporaryFailuresPastTheAttemptsFailTransiently() throws {
        let server = try SMTPFakeServer(.init(temporaryFailures: 5))
        defer { server.stop() }
        XCTAssertThrowsError(try client(server, attempts: 2).send(from: "a@example.com", to: ["b@example.com"], message: message)) { error in
            let failure = error as? SMTPError
            XCTAssertEqual(failure?.kind, .transient)
            XCTAssertEqual(failure?.replyCode, 451)
            XCTAssertTrue(failure?.detail.contains("MAIL FROM: server replied 451") == true, failure?.detail ?? "")
        }
        XCTAssertEqual(server.connections, 2)
    }

    func testPermanentFailureIsClearAndNotRetried() throws {
        let server = try SMTPFakeServer(.init(rejectRecipient: true))
        defer { server.stop() }
        XCTAssertThrowsError(try client(server).send(from: "a@example.com", to: ["nobody@example.com"], message: message)) { error in
            let failure = error as? SMTPError
            XCTAssertEqual(failure?.kind, .permanent)
            XCTAssertEqual(failure?.replyCode, 550)
            XCTAssertEqual(failure?.detail, "RCPT TO: server replied 550 5.1.1 no such mailbox")
        }
        XCTAssertEqual(server.connections, 1)
    }

    func testASilentServerTimesOut() throws {
        let server = try SMTPFakeServer(.init(silent: true))
        defer { server.stop() }
        // The configured timeout, not the 30 s default, is the one that fired: the error names it.
        XCTAssertThrowsError(try client(server, attempts: 1, timeoutMilliseconds: 300).send(from: "a@example.com", to: ["b@example.com"], message: message)) { error in
            XCTAssertEqual((error as? SMTPError)?.kind, .transient)
            XCTAssertEqual((error as? SMTPError)?.detail, "the server did not reply within 300 ms")
        }
    }

    func testNobodyListeningIsATransientFailure() throws {
        let server = try SMTPFakeServer()
        let port = server.port
        server.stop()
        var settings = SMTPClient.Settings(url: try SMTPURL("smtp://127.0.0.1:\(port)?starttls=never"))
        settings.maxAttempts = 1
        XCTAssertThrowsError(try SMTPClient(settings: settings).send(from: "a@example.com", to: ["b@example.com"], message: message)) { error in
            XCTAssertEqual((error as? SMTPError)?.kind, .transient)
        }
    }

    func testFallsBackToHELO() throws {
        let server = try SMTPFakeServer(.init(noEHLO: true))
        defer { server.stop() }
        try client(server).send(from: "a@example.com", to: ["b@example.com"], message: message)
        XCTAssertEqual(server.commands.prefix(2), ["EHLO localhost", "HELO localhost"])
    }

    func testAuthPlain() throws {
        let server = try SMTPFakeServer(.init(authMechanisms: ["LOGIN", "PLAIN"]))
        defer { server.stop() }
        try client(server, query: "?starttls=never&insecure_auth=true", user: "mailer:s%3Acret@").send(from: "a@example.com", to: ["b@example.com"], message: message)
        XCTAssertEqual(server.credentials, ["PLAIN mailer s:cret"])
    }

    func testAuthLogin() throws {
        let server = try SMTPFakeServer(.init(authMechanisms: ["LOGIN"]))
        defer { server.stop() }
        try client(server, query: "?starttls=never&insecure_auth=true", user: "mailer:secret@").send(from: "a@example.com", to: ["b@example.com"], message: message)
        XCTAssertEqual(server.credentials, ["LOGIN mailer secret"])
        XCTAssertTrue(server.commands.contains("AUTH LOGIN"))
    }

    func testCredentialsNeverTravelWithoutTLSByDefault() throws {
        let server = try SMTPFakeServer(.init(authMechanisms: ["PLAIN"]))
        defer { server.stop() }
        XCTAssertThrowsError(try client(server, query: "", user: "mailer:secret@").send(from: "a@example.com", to: ["b@example.com"], message: message)) { error in
            XCTAssertEqual((error as? SMTPError)?.kind, .permanent)
            XCTAssertTrue((error as? SMTPError)?.detail.contains("refusing to send credentials without TLS") == true)
        }
        XCTAssertTrue(server.credentials.isEmpty)
    }

    func testStartTLSRequiredButNotOfferedFails() throws {
        let server = try SMTPFakeServer()
        defer { server.stop() }
        XCTAssertThrowsError(try client(server, query: "?starttls=required").send(from: "a@example.com", to: ["b@example.com"], message: message)) { error in
            XCTAssertEqual((error as? SMTPError)?.kind, .permanent)
            XCTAssertTrue((error as? SMTPError)?.detail.contains("does not offer STARTTLS") == true)
        }
        XCTAssertTrue(server.messages.isEmpty)
    }

    func testInjectionInAddressesIsRefused() throws {
        let server = try SMTPFakeServer()
        defer { server.stop() }
        let smtp = try client(server)
        for bad in ["a@example.com>\r\nRCPT TO:<evil@example.com", "a b@example.com", "<a@example.com>", "plain"] {
            XCTAssertThrowsError(try smtp.send(from: "a@example.com", to: [bad], message: message), bad)
            XCTAssertThrowsError(try smtp.send(from: bad, to: ["a@example.com"], message: message), bad)
        }
        XCTAssertEqual(server.connections, 0)
    }

    func testProviderRendersAndSendsMIME() throws {
        let server = try SMTPFakeServer()
        defer { server.stop() }
        let provider = SMTPProvider(client: try client(server), from: MailAddress(displayName: "Latchkey", address: "no-reply@example.com"), logger: Logger(service: "test", sink: LogSink()))
        try provider.deliver(OutgoingMessage(channel: .email, to: "alice@example.com", subject: "Hello", text: ".dot first\nsecond", html: "<p>hi</p>"))
        let data = String(decoding: try XCTUnwrap(server.messages.first), as: UTF8.self)
        XCTAssertTrue(data.contains("From: Latchkey <no-reply@example.com>\r\n"))
        XCTAssertTrue(data.contains("\r\n..dot first\r\n"))
        XCTAssertTrue(data.contains("multipart/alternative"))
        XCTAssertThrowsError(try provider.deliver(OutgoingMessage(channel: .sms, to: "+15555550100", text: "x"))) { error in
            XCTAssertEqual((error as? DeliveryError)?.permanent, true)
        }
    }

    func testProviderFromConfiguration() throws {
        let options = DeliveryOptions.all + SMTPOptions.all
        let logger = Logger(service: "test", sink: LogSink())
        let configuration = try Configuration(
            arguments: ["--smtp-url", "smtps://mailer:secret@mail.example.com", "--mail-from", "Acme Bank <no-reply@acme.example>", "--smtp-attempts", "5"],
            environment: [:], options: options)
        let provider = try SMTPProvider(configuration: configuration, logger: logger)
        XCTAssertEqual(provider.from, MailAddress(displayName: "Acme Bank", address: "no-reply@acme.example"))
        XCTAssertEqual(provider.client.settings.url.security, .implicit)
        XCTAssertEqual(provider.client.settings.maxAttempts, 5)
        let missing = try Configuration(arguments: [], environment: [:], options: options)
        XCTAssertThrowsError(try SMTPProvider(configuration: missing, logger: logger))
        let badFrom = try Configuration(arguments: ["--smtp-url", "smtp://h", "--mail-from", "not an address"], environment: [:], options: options)
        XCTAssertThrowsError(try SMTPProvider(configuration: badFrom, logger: logger))
        let fromEnvironment = try Configuration(arguments: [], environment: ["LATCHKEY_SMTP_URL": "smtp://h:2525?starttls=required"], options: options)
        XCTAssertEqual(try SMTPProvider(configuration: fromEnvironment, logger: logger).client.settings.url.port, 2525)
    }

    func testUntrustedCertificateIsRefused() throws {
        // A CA file that exists but does not sign the server: the handshake never starts here
        // (the fake server has no TLS), so this checks loading and refusal of a bad CA path.
        var settings = SMTPClient.Settings(url: try SMTPURL("smtps://127.0.0.1:1"))
        settings.caFile = "/nonexistent/ca.pem"
        XCTAssertThrowsError(try SMTPClient(settings: settings)) { error in
            XCTAssertEqual((error as? SMTPError)?.kind, .permanent)
            XCTAssertTrue((error as? SMTPError)?.detail.contains("CA file") == true)
        }
    }
}
