import Foundation
import TLS
import TLSTestSupport
import XCTest

@testable import Delivery

/// The SMTP client verifies its server through the TLS layer like every other client, for smtps
/// and STARTTLS alike: by host name (sent as SNI) or IP address (never sent), against a chain that
/// must lead to the configured CA and be in date. A refused certificate is permanent (not retried);
/// a stalled handshake is transient.
final class SMTPTLSVerificationTests: XCTestCase {
    private var certificates: TestCertificates!
    private let message = Array("Subject: hi\r\n\r\nover TLS\r\n".utf8)

    override func setUpWithError() throws {
        certificates = try TestCertificates.shared()
    }

    /// What the server heard, each command marked with whether it came inside TLS.
    final class Transcript: @unchecked Sendable {
        private let lock = NSLock()
        private var _lines: [String] = []
        func append(_ line: String) { lock.withLock { _lines.append(line) } }
        var lines: [String] { lock.withLock { _lines } }
    }

    /// A scripted SMTP server: TLS from the first byte (smtps) or after STARTTLS.
    private func server(serving pair: TestCertificates.Pair, implicitTLS: Bool, transcript: Transcript) throws -> TLSTestServer {
        let context = try TLSServerContext(certificateChainFile: pair.certificate, privateKeyFile: pair.key)
        return try TLSTestServer(context: context) { connection in
            if implicitTLS { guard connection.startTLS() else { return } }
            connection.write("220 tls.test ESMTP\r\n")
            var inData = false
            while let line = connection.readLine() {
                if inData {
                    if line == "." {
                        inData = false
                        connection.write("250 queued\r\n")
                    }
                    continue
                }
                let command = line.uppercased()
                transcript.append((connection.isTLS ? "tls " : "plain ") + (command.hasPrefix("AUTH PLAIN") ? "AUTH PLAIN ***" : command))
                if command.hasPrefix("EHLO") {
                    connection.write(connection.isTLS ? "250-tls.test\r\n250 AUTH PLAIN\r\n" : "250-tls.test\r\n250 STARTTLS\r\n")
                } else if command == "STARTTLS" {
                    connection.write("220 go ahead\r\n")
                    guard connection.startTLS() else { return }
                } else if command.hasPrefix("AUTH PLAIN") {
                    connection.write("235 ok\r\n")
                } else if command == "DATA" {
                    inData = true
                    connection.write("354 go on\r\n")
                } else if command == "QUIT" {
                    connection.write("221 bye\r\n")
                    return
                } else {
                    connection.write("250 ok\r\n")
                }
            }
        }
    }

    private func send(_ url: String, trusting trusted: String?, attempts: Int = 1, timeoutMilliseconds: Int = 5000) throws {
        var settings = SMTPClient.Settings(url: try SMTPURL(url))
        settings.caFile = trusted
        settings.maxAttempts = attempts
        settings.initialBackoffMilliseconds = 10
        settings.replyTimeoutMilliseconds = timeoutMilliseconds
        settings.connectTimeoutMilliseconds = timeoutMilliseconds
        try SMTPClient(settings: settings).send(from: "a@example.com", to: ["b@example.com"], message: message)
    }

    func testSMTPSVerifiesAHostNameWithSNIAndAnIPAddressWithout() throws {
        let transcript = Transcript()
        let server = try server(serving: certificates.valid, implicitTLS: true, transcript: transcript)
        defer { server.stop() }
        try send("smtps://localhost:\(server.port)", trusting: certificates.authority)
        try send("smtps://127.0.0.1:\(server.port)", trusting: certificates.authority)
        server.stop()
        XCTAssertEqual(server.handshakes.map(\.serverName), ["localhost", nil])
        XCTAssertEqual(transcript.lines.filter { $0.hasSuffix("DATA") }, ["tls DATA", "tls DATA"])
    }

    func testSTARTTLSIsVerifiedBeforeTheCredentialsGo() throws {
        let transcript = Transcript()
        let server = try server(serving: certificates.valid, implicitTLS: false, transcript: transcript)
        defer { server.stop() }
        try send("smtp://mailer:secret@127.0.0.1:\(server.port)?starttls=required", trusting: certificates.authority)
        server.stop()
        XCTAssertEqual(server.handshakes.count, 1)
        XCTAssertNil(server.handshakes.first?.serverName)
        XCTAssertEqual(transcript.lines.prefix(4), ["plain EHLO LOCALHOST", "plain STARTTLS", "tls EHLO LOCALHOST", "tls AUTH PLAIN ***"])
    }

    func testRefusedCertificatesArePermanentNameTheReasonAndAreNotRetried() throws {
        for implicitTLS in [true, false] {
            for refusal in certificates.refusals {
                let server = try server(serving: refusal.served, implicitTLS: implicitTLS, transcript: Transcript())
                let url = implicitTLS ? "smtps://\(refusal.peer):\(server.port)" : "smtp://\(refusal.peer):\(server.port)?starttls=required"
                XCTAssertThrowsError(try send(url, trusting: refusal.trusted, attempts: 3), url) { error in
                    let failure = error as? SMTPError
                    XCTAssertEqual(failure?.kind, .permanent, "\(url) \(refusal.served.certificate): \(error)")
                    XCTAssertTrue(
                        failure?.detail.contains("certificate verification failed") == true && failure?.detail.contains(refusal.reason) == true,
                        "\(url) \(refusal.served.certificate): \(error)")
                }
                server.stop()
                XCTAssertEqual(server.handshakes.count, 1, "\(url): a refused certificate is not retried")
            }
        }
    }

    func testASelfSignedCertificateGivenAsTheCAFileIsTrusted() throws {
        let server = try server(serving: certificates.selfSigned, implicitTLS: true, transcript: Transcript())
        defer { server.stop() }
        try send("smtps://localhost:\(server.port)", trusting: certificates.selfSigned.certificate)
    }

    func testAHandshakeThatNeverCompletesIsATransientTimeout() throws {
        let context = try TLSServerContext(certificateChainFile: certificates.valid.certificate, privateKeyFile: certificates.valid.key)
        let server = try TLSTestServer(context: context) { connection in
            while connection.readLine() != nil {}  // takes the ClientHello, never answers it
        }
        defer { server.stop() }
        XCTAssertThrowsError(try send("smtps://localhost:\(server.port)", trusting: certificates.authority, timeoutMilliseconds: 200)) { error in
            XCTAssertEqual((error as? SMTPError)?.kind, .transient, "\(error)")
            XCTAssertTrue((error as? SMTPError)?.detail.contains("timed out") == true, "\(error)")
        }
    }
}
