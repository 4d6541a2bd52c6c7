import Foundation
import StackLauncher
import TLSTestSupport
import XCTest

/// `latchkey call` against a gateway whose door speaks TLS, as the TLS compose override's health
/// check runs it: verified by CA and name, or by the gateway's own certificate (pinned) when the
/// address (127.0.0.1 inside the container) is not a name the certificate holds.
final class CallOverTLSEndToEndTests: XCTestCase {
    private var directory: String!
    private var gateway: LaunchedProcess?

    override func setUpWithError() throws { directory = try makeScratchDirectory("call-tls") }

    override func tearDown() {
        gateway?.stop()
        gateway = nil
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func startGateway(serving pair: TestCertificates.Pair) throws -> Int {
        let gateway = try LaunchedProcess("gateway", name: "gateway", arguments: [
            "--identity", "127.0.0.1:1", "--verification", "127.0.0.1:1", "--accounts", "127.0.0.1:1", "--reset", "127.0.0.1:1",
            "--http-listen", "off", "--tls-cert", pair.certificate, "--tls-key", pair.key,
        ], directory: directory)
        self.gateway = gateway
        return gateway.endpoint.port
    }

    /// Runs `latchkey call gateway.ping` with `arguments`: its exit status, stdout and stderr together.
    private func call(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: (Stack.siblingBinaryDirectory() as NSString).appendingPathComponent("latchkey"))
        process.arguments = ["call", "gateway.ping"] + arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LATCHKEY_") || $0.key.hasPrefix("LATCHKEY_TEST") }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    func testCallSpeaksTLSVerifyingTheGatewaysCertificate() throws {
        let certificates = try TestCertificates.shared()
        let port = try startGateway(serving: certificates.valid)
        for arguments in [
            ["--gateway", "tls://127.0.0.1:\(port)", "--tls-ca", certificates.authority],
            ["--gateway", "localhost:\(port)", "--tls", "--tls-ca", certificates.authority],
            ["--gateway", "127.0.0.1:\(port)", "--tls-ca", certificates.authority],
        ] {
            let answer = try call(arguments)
            XCTAssertEqual(answer.status, 0, "\(arguments): \(answer.output)")
            XCTAssertTrue(answer.output.contains(#""pong":true"#), answer.output)
        }
        let plain = try call(["--gateway", "127.0.0.1:\(port)"])
        XCTAssertNotEqual(plain.status, 0, "plain TCP to a TLS door gets no answer: \(plain.output)")
        let untrusted = try call(["--gateway", "tls://127.0.0.1:\(port)"])
        XCTAssertNotEqual(untrusted.status, 0, "a private CA is not in the system store: \(untrusted.output)")
        XCTAssertTrue(untrusted.output.contains("not trusted"), untrusted.output)
    }

    /// The compose health check: the gateway's own certificate names the public host, the check
    /// reaches 127.0.0.1. That certificate given as --tls-ca is trusted as it is; a certificate
    /// only signed by a trusted CA must still name the address.
    func testTheServersOwnCertificateIsTrustedUnderAnyNameAndNoOtherIs() throws {
        let certificates = try TestCertificates.shared()
        let port = try startGateway(serving: certificates.otherHost)
        let pinned = try call(["--gateway", "tls://127.0.0.1:\(port)", "--tls-ca", certificates.otherHost.certificate])
        XCTAssertEqual(pinned.status, 0, pinned.output)
        XCTAssertTrue(pinned.output.contains(#""pong":true"#), pinned.output)
        let byAuthority = try call(["--gateway", "tls://127.0.0.1:\(port)", "--tls-ca", certificates.authority])
        XCTAssertNotEqual(byAuthority.status, 0, "signed by the CA but naming other.example: \(byAuthority.output)")
        XCTAssertTrue(byAuthority.output.contains("not trusted"), byAuthority.output)
        let another = try call(["--gateway", "tls://127.0.0.1:\(port)", "--tls-ca", certificates.addressAsName.certificate])
        XCTAssertNotEqual(another.status, 0, "a different certificate is not pinned: \(another.output)")
    }
}
