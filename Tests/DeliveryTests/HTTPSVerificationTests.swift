import Delivery
import HTTP
import TLS
import TLSTestSupport
import XCTest

/// The provider client verifies its peer through the TLS layer like every other client: by host
/// name (sent as SNI) or by IP address (never sent as SNI), against a chain that must lead to the
/// configured CA and be in date.
final class HTTPSVerificationTests: XCTestCase {
    private var certificates: TestCertificates!

    override func setUpWithError() throws {
        certificates = try TestCertificates.shared()
    }

    /// One GET against a TLS server presenting `pair`; the server's handshakes come back too.
    private func get(
        _ host: String, serving pair: TestCertificates.Pair, address: String = "127.0.0.1", trusting trusted: String?
    ) throws -> (outcome: Result<HTTPClient.Response, HTTPError>, handshakes: [TLSTestServer.Handshake]) {
        let context = try TLSServerContext(certificateChainFile: pair.certificate, privateKeyFile: pair.key)
        let server = try TLSTestServer(context: context, address: address) { connection in
            guard connection.startTLS() else { return }
            while let line = connection.readLine(), !line.isEmpty {}
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        }
        let attempt = Result { () throws -> Result<HTTPClient.Response, HTTPError> in
            let client = try HTTPClient(timeoutMilliseconds: 5000, caFile: trusted)
            let url = try HTTPURL("https://\(host.contains(":") ? "[\(host)]" : host):\(server.port)/hook")
            do {
                return .success(try client.send(HTTPClient.Request(method: "GET", url: url)))
            } catch let error as HTTPError {
                return .failure(error)
            }
        }
        server.stop()
        return (try attempt.get(), server.handshakes)
    }

    func testAHostNameURLIsVerifiedAndSentAsSNI() throws {
        let (outcome, handshakes) = try get("localhost", serving: certificates.valid, trusting: certificates.authority)
        XCTAssertEqual(try outcome.get().body, Array("ok".utf8))
        XCTAssertEqual(handshakes.map(\.serverName), ["localhost"])
    }

    func testAnIPAddressURLIsVerifiedAgainstTheCertificatesAddressesWithoutSNI() throws {
        let (outcome, handshakes) = try get("127.0.0.1", serving: certificates.valid, trusting: certificates.authority)
        XCTAssertEqual(try outcome.get().status, 200)
        XCTAssertEqual(handshakes.count, 1)
        XCTAssertNil(handshakes.first?.serverName, "RFC 6066 §3: no literal address in SNI")
    }

    func testAnIPv6AddressURLIsVerified() throws {
        let result: (outcome: Result<HTTPClient.Response, HTTPError>, handshakes: [TLSTestServer.Handshake])
        do {
            result = try get("::1", serving: certificates.valid, address: "::1", trusting: certificates.authority)
        } catch {
            throw XCTSkip("no IPv6 loopback here: \(error)")
        }
        XCTAssertEqual(try result.outcome.get().status, 200)
    }

    func testWrongHostExpiredAndUntrustedCertificatesAreRefused() throws {
        for refusal in certificates.refusals {
            let (outcome, _) = try get(refusal.peer, serving: refusal.served, trusting: refusal.trusted)
            guard case .failure(let error) = outcome else {
                XCTFail("\(refusal.peer) with \(refusal.served.certificate) was accepted")
                continue
            }
            XCTAssertTrue(error.detail.contains("not trusted") && error.detail.contains(refusal.reason), "\(refusal.peer) \(refusal.served.certificate): \(error)")
        }
    }

    func testASelfSignedCertificateGivenAsTheCAFileIsTrusted() throws {
        let (outcome, _) = try get("localhost", serving: certificates.selfSigned, trusting: certificates.selfSigned.certificate)
        XCTAssertEqual(try outcome.get().status, 200)
    }
}
