import TLS
import TLSTestSupport
import XCTest

/// One rule for every client: a host name is checked against the certificate's DNS names and
/// sent as SNI, an IP address against its IP addresses and never sent; the chain must lead to
/// a trusted CA and be in date. Real sockets, a real server-role session on the other end.
final class PeerVerificationTests: XCTestCase {
    private var certificates: TestCertificates!

    override func setUpWithError() throws {
        certificates = try TestCertificates.shared()
    }

    /// Serves `pair` on `address`, connects as a client trusting `trusted` and expecting `peer`,
    /// and exchanges one line. Returns the client's outcome and what the server saw.
    private func exchange(
        serving pair: TestCertificates.Pair, address: String = "127.0.0.1", trusting trusted: String?, peer: String
    ) throws -> (outcome: Result<String, TLSError>, handshakes: [TLSTestServer.Handshake]) {
        let server = try TLSTestServer(context: try TLSServerContext(certificateChainFile: pair.certificate, privateKeyFile: pair.key), address: address) { connection in
            guard connection.startTLS(), let line = connection.readLine() else { return }
            connection.write("echo: \(line)\n")
        }
        let attempt = Result { try Self.connect(address: address, port: server.port, trusting: trusted, peer: peer) }
        server.stop()  // after the client closed: every server-side handshake is recorded
        return (try attempt.get(), server.handshakes)
    }

    private static func connect(address: String, port: Int, trusting trusted: String?, peer: String) throws -> Result<String, TLSError> {
        let socket = try TestSocket(address: address, port: port)
        defer { socket.close() }
        let session = try TLSClientContext(trustedCertificatesFile: trusted).connection(overSocket: socket.fd, to: PeerName(peer))
        do {
            return .success(try pingPong(session))
        } catch let error as TLSError {
            return .failure(error)
        }
    }

    private static func pingPong(_ session: TLSConnection) throws -> String {
        try session.completeHandshake()
        try Array("ping\n".utf8).withUnsafeBytes { try session.writeAll($0) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = try buffer.withUnsafeMutableBytes { try session.readSome(into: $0) }
        session.shutdown()
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    private func refusal(_ outcome: Result<String, TLSError>, file: StaticString = #filePath, line: UInt = #line) -> TLSError? {
        guard case .failure(let error) = outcome else {
            XCTFail("the handshake was accepted", file: file, line: line)
            return nil
        }
        XCTAssertEqual(error.kind, .untrustedPeer, "\(error)", file: file, line: line)
        return error
    }

    func testAHostNameIsVerifiedAgainstTheDNSNamesAndSentAsSNI() throws {
        let (outcome, handshakes) = try exchange(serving: certificates.valid, trusting: certificates.authority, peer: "localhost")
        XCTAssertEqual(try outcome.get(), "echo: ping\n")
        XCTAssertEqual(handshakes.map(\.serverName), ["localhost"])
    }

    func testAnIPv4AddressIsVerifiedAgainstTheIPAddressesAndNeverSentAsSNI() throws {
        let (outcome, handshakes) = try exchange(serving: certificates.valid, trusting: certificates.authority, peer: "127.0.0.1")
        XCTAssertEqual(try outcome.get(), "echo: ping\n")
        XCTAssertEqual(handshakes.count, 1)
        XCTAssertNil(handshakes.first?.serverName, "RFC 6066 §3: no literal address in SNI")
    }

    func testAnIPv6AddressIsVerifiedAgainstTheIPAddresses() throws {
        let result: (outcome: Result<String, TLSError>, handshakes: [TLSTestServer.Handshake])
        do {
            result = try exchange(serving: certificates.valid, address: "::1", trusting: certificates.authority, peer: "::1")
        } catch {
            throw XCTSkip("no IPv6 loopback here: \(error)")
        }
        XCTAssertEqual(try result.outcome.get(), "echo: ping\n")
        XCTAssertNil(result.handshakes.first?.serverName)
    }

    func testAnotherHostsCertificateIsRefusedByNameAndByAddress() throws {
        let byName = refusal(try exchange(serving: certificates.otherHost, trusting: certificates.authority, peer: "localhost").outcome)
        XCTAssertTrue(byName?.context.contains("hostname mismatch") == true, "\(String(describing: byName))")
        let byAddress = refusal(try exchange(serving: certificates.otherHost, trusting: certificates.authority, peer: "127.0.0.1").outcome)
        XCTAssertTrue(byAddress?.context.contains("IP address mismatch") == true, "\(String(describing: byAddress))")
    }

    func testAnAddressSpelledAsANameOrCommonNameIsNotAnIPAddress() throws {
        let error = refusal(try exchange(serving: certificates.addressAsName, trusting: certificates.authority, peer: "127.0.0.1").outcome)
        XCTAssertTrue(error?.context.contains("IP address mismatch") == true, "\(String(describing: error))")
    }

    func testAnExpiredCertificateIsRefusedEvenFromATrustedCA() throws {
        let error = refusal(try exchange(serving: certificates.expired, trusting: certificates.authority, peer: "localhost").outcome)
        XCTAssertTrue(error?.context.contains("expired") == true, "\(String(describing: error))")
    }

    func testASelfSignedCertificateIsRefusedUnlessItIsTheCAFile() throws {
        let error = refusal(try exchange(serving: certificates.selfSigned, trusting: certificates.authority, peer: "localhost").outcome)
        XCTAssertTrue(error?.context.contains("self") == true, "\(String(describing: error))")
        let trusted = try exchange(serving: certificates.selfSigned, trusting: certificates.selfSigned.certificate, peer: "127.0.0.1")
        XCTAssertEqual(try trusted.outcome.get(), "echo: ping\n")
    }

    func testTheSystemStoreDoesNotTrustAPrivateCA() throws {
        let error = refusal(try exchange(serving: certificates.valid, trusting: nil, peer: "localhost").outcome)
        XCTAssertTrue(error?.context.contains("local issuer") == true, "\(String(describing: error))")
    }

    func testTheServerSendsItsIntermediateSoAClientTrustingOnlyTheRootVerifiesTheChain() throws {
        // `valid` is signed by the intermediate, which only the server's chain file holds.
        let (outcome, _) = try exchange(serving: certificates.valid, trusting: certificates.authority, peer: "localhost")
        XCTAssertEqual(try outcome.get(), "echo: ping\n")
        let leafOnly = NSTemporaryDirectory() + "leaf-only-\(getpid()).pem"
        defer { try? FileManager.default.removeItem(atPath: leafOnly) }
        let chain = try String(contentsOfFile: certificates.valid.certificate, encoding: .utf8)
        let end = try XCTUnwrap(chain.range(of: "-----END CERTIFICATE-----\n"))
        try String(chain[..<end.upperBound]).write(toFile: leafOnly, atomically: true, encoding: .utf8)
        let error = refusal(try exchange(serving: .init(certificate: leafOnly, key: certificates.valid.key), trusting: certificates.authority, peer: "localhost").outcome)
        XCTAssertTrue(error?.context.contains("local issuer") == true, "\(String(describing: error))")
    }
}
