import COpenSSL
import TLS
import TLSTestSupport
import XCTest

/// How failures look: one error type with a kind a caller can act on, OpenSSL's queue taken
/// with it (nothing left behind for the next OpenSSL call on the thread), timeouts told apart
/// from refusals, and a close without close_notify told apart from a clean end.
final class ErrorsAndEndsTests: XCTestCase {
    private var certificates: TestCertificates!

    override func setUpWithError() throws {
        certificates = try TestCertificates.shared()
    }

    func testConfigurationMistakesNameTheFileAndCarryOpenSSLsQueue() throws {
        let missing = "/nonexistent/latchkey/key.pem"
        XCTAssertThrowsError(try TLSServerContext(certificateChainFile: certificates.valid.certificate, privateKeyFile: missing)) { error in
            let failure = error as? TLSError
            XCTAssertEqual(failure?.kind, .configuration)
            XCTAssertTrue(failure?.context.contains(missing) == true, "\(error)")
            XCTAssertFalse(failure?.openSSLErrors.isEmpty ?? true, "OpenSSL's reasons travel with the error")
        }
        XCTAssertThrowsError(try TLSServerContext(certificateChainFile: certificates.valid.certificate, privateKeyFile: certificates.otherHost.key)) { error in
            XCTAssertEqual((error as? TLSError)?.kind, .configuration)
            XCTAssertTrue((error as? TLSError)?.openSSLErrors.contains { $0.contains("key values mismatch") } == true, "\(error)")
        }
        XCTAssertThrowsError(try TLSClientContext(trustedCertificatesFile: "/nonexistent/ca.pem")) { error in
            XCTAssertEqual((error as? TLSError)?.kind, .configuration)
            XCTAssertTrue((error as? TLSError)?.context.contains("CA file") == true, "\(error)")
        }
        XCTAssertEqual(ERR_peek_error(), 0, "every failure took its errors off the thread's queue")
    }

    func testARefusedHandshakeLeavesNothingOnTheThreadsErrorQueue() throws {
        let server = try TLSTestServer(context: try TLSServerContext(certificateChainFile: certificates.otherHost.certificate, privateKeyFile: certificates.otherHost.key)) { connection in
            _ = connection.startTLS()
        }
        defer { server.stop() }
        let socket = try TestSocket(port: server.port)
        let session = try TLSClientContext(trustedCertificatesFile: certificates.authority).connection(overSocket: socket.fd, to: PeerName("localhost"))
        XCTAssertThrowsError(try session.completeHandshake()) { error in
            XCTAssertEqual((error as? TLSError)?.kind, .untrustedPeer)
            XCTAssertTrue((error as? TLSError)?.openSSLErrors.contains { $0.contains("certificate verify failed") } == true, "\(error)")
        }
        XCTAssertEqual(ERR_peek_error(), 0)
        socket.close()
    }

    func testAServerThatNeverAnswersTheHandshakeIsATimeoutNotARefusal() throws {
        let server = try TLSTestServer(context: try TLSServerContext(certificateChainFile: certificates.valid.certificate, privateKeyFile: certificates.valid.key)) { connection in
            while connection.readLine() != nil {}  // holds the connection, never speaks TLS, until the client leaves
        }
        defer { server.stop() }
        let socket = try TestSocket(port: server.port, timeoutMilliseconds: 200)
        let session = try TLSClientContext(trustedCertificatesFile: certificates.authority).connection(overSocket: socket.fd, to: PeerName("localhost"))
        XCTAssertThrowsError(try session.completeHandshake()) { error in
            XCTAssertEqual((error as? TLSError)?.kind, .timedOut, "\(error)")
        }
        socket.close()
    }

    func testACloseWithoutCloseNotifyIsAnErrorAndACleanCloseIsTheEnd() throws {
        for clean in [true, false] {
            let server = try TLSTestServer(context: try TLSServerContext(certificateChainFile: certificates.valid.certificate, privateKeyFile: certificates.valid.key)) { connection in
                guard connection.startTLS() else { return }
                connection.write("partial")
                if !clean { connection.dropWithoutCloseNotify() }
            }
            let socket = try TestSocket(port: server.port)
            let session = try TLSClientContext(trustedCertificatesFile: certificates.authority).connection(overSocket: socket.fd, to: PeerName("localhost"))
            try session.completeHandshake()
            var buffer = [UInt8](repeating: 0, count: 64)
            let first = try buffer.withUnsafeMutableBytes { try session.readSome(into: $0) }
            XCTAssertEqual(String(decoding: buffer[..<first], as: UTF8.self), "partial")
            if clean {
                XCTAssertEqual(try buffer.withUnsafeMutableBytes { try session.readSome(into: $0) }, 0, "close_notify is the end")
            } else {
                XCTAssertThrowsError(try buffer.withUnsafeMutableBytes { try session.readSome(into: $0) }, "a truncation is not an end") { error in
                    XCTAssertEqual((error as? TLSError)?.kind, .io, "\(error)")
                }
            }
            socket.close()
            server.stop()
        }
    }
}
