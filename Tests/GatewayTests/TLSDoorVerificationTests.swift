import Foundation
@testable import Gateway
import LineProtocol
import Platform
import ServerTestSupport
import TestSupport
import TLS
import TLSTestSupport
import XCTest


/// The gateway's line door (non-blocking, on the event loop) as a client of the TLS layer sees
/// it: its chain verifies by host name and by IP address, certificates that are wrong for the
/// client are refused, and refused handshakes do not stop it serving the next client.
final class TLSDoorVerificationTests: XCTestCase {
    private var certificates: TestCertificates!
    private var gateways: [GatewayUnderTest] = []

    override func setUpWithError() throws {
        certificates = try TestCertificates.shared()
    }

    override func tearDown() {
        gateways.forEach { $0.shutdown() }
        gateways = []
    }

    private func door(serving pair: TestCertificates.Pair) throws -> Int {
        let context = try TLSServerContext(certificateChainFile: pair.certificate, privateKeyFile: pair.key)
        let gateway = try GatewayUnderTest(endpoints: ["identity": [Endpoint(host: "127.0.0.1", port: 1)]]) { server in
            server.makeTransport = { socket in try context.makeTransport(for: socket) }
        }
        gateways.append(gateway)
        return gateway.port
    }

    /// Sends `count` pings in one write over a verified session and counts the pongs.
    private func pings(port: Int, peer: String, trusting trusted: String, count: Int = 1) throws -> Int {
        try Self.pings(port: port, peer: peer, context: try TLSClientContext(trustedCertificatesFile: trusted), count: count)
    }

    private static func pings(port: Int, peer: String, context: TLSClientContext, count: Int = 1) throws -> Int {
        let socket = try TestSocket(port: port)
        defer { socket.close() }
        let session = try context.connection(overSocket: socket.fd, to: PeerName(peer))
        try session.completeHandshake()
        let lines = (0..<count).map { #"{"jsonrpc":"2.0","id":\#($0),"method":"gateway.ping"}"# + "\n" }.joined()
        try Array(lines.utf8).withUnsafeBytes { try session.writeAll($0) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while received.filter({ $0 == 0x0A }).count < count {
            let got = try buffer.withUnsafeMutableBytes { try session.readSome(into: $0) }
            guard got > 0 else { break }
            received += buffer[..<got]
        }
        session.shutdown()
        return String(decoding: received, as: UTF8.self).split(separator: "\n").filter { $0.contains(#""pong":true"#) }.count
    }

    func testTheDoorsChainVerifiesByHostNameAndByIPAddress() throws {
        let port = try door(serving: certificates.valid)
        XCTAssertEqual(try pings(port: port, peer: "localhost", trusting: certificates.authority), 1)
        XCTAssertEqual(try pings(port: port, peer: "127.0.0.1", trusting: certificates.authority, count: 2_000), 2_000)
    }

    func testCertificatesWrongForTheClientAreRefusedAndTheDoorServesTheNextClient() throws {
        // (served, expected peer, reason, then a client for whom it is right: peer and CA file)
        let cases: [(TestCertificates.Pair, String, String, (String, String)?)] = [
            (certificates.otherHost, "localhost", "hostname mismatch", ("other.example", certificates.authority)),
            (certificates.otherHost, "127.0.0.1", "IP address mismatch", ("other.example", certificates.authority)),
            (certificates.expired, "localhost", "expired", nil),
            (certificates.selfSigned, "127.0.0.1", "self", ("127.0.0.1", certificates.selfSigned.certificate)),
        ]
        for (pair, peer, reason, rightClient) in cases {
            let port = try door(serving: pair)
            for _ in 0..<3 {
                XCTAssertThrowsError(try pings(port: port, peer: peer, trusting: certificates.authority)) { error in
                    XCTAssertEqual((error as? TLSError)?.kind, .untrustedPeer, "\(error)")
                    XCTAssertTrue((error as? TLSError)?.context.contains(reason) == true, "\(error)")
                }
            }
            if let (rightPeer, trusted) = rightClient {
                XCTAssertEqual(try pings(port: port, peer: rightPeer, trusting: trusted), 1, "the refusals left the door serving")
            }
        }
    }

    func testConcurrentHandshakesRightAndWrongAreEachDecidedOnTheirOwn() throws {
        let port = try door(serving: certificates.valid)
        let context = try TLSClientContext(trustedCertificatesFile: certificates.authority)  // one context, shared by every thread
        let clients = 32
        let outcomes = (0..<clients).map { _ in ResultBox<Result<String, Error>>() }
        DispatchQueue.concurrentPerform(iterations: clients) { index in
            let peer = index % 2 == 0 ? "127.0.0.1" : "wrong.example"
            outcomes[index].set(Result {
                do {
                    return try Self.pings(port: port, peer: peer, context: context, count: 50) == 50 ? "served" : "short"
                } catch let error as TLSError where error.kind == .untrustedPeer {
                    return "refused"
                }
            })
        }
        let expected = (0..<clients).map { $0 % 2 == 0 ? "served" : "refused" }
        XCTAssertEqual(outcomes.map { (try? $0.wait().get()) ?? "failed" }, expected)
    }
}
