import Foundation
import Platform
import TLS
import TLSTestSupport
import XCTest

/// The one blocking transport under the provider HTTP client and the SMTP client, attacked where
/// a worker thread could hang on it: a peer that accepts and never speaks, one that never reads,
/// one that hangs up, one that is not there. Each must end in a typed error, plain and over TLS.
final class BlockingStreamTests: XCTestCase {
    private let ioTimeoutMilliseconds = 200
    private var servers: [TLSTestServer] = []
    /// Lets a server's handler return once the test is done with its connection.
    private let released = DispatchSemaphore(value: 0)

    override func tearDown() {
        for _ in servers { released.signal() }
        servers.forEach { $0.stop() }
        servers = []
    }

    private func server(tls: Bool, _ handler: @escaping @Sendable (TestConnection) -> Void) throws -> TLSTestServer {
        let certificates = try TestCertificates.shared()
        let context = try TLSServerContext(certificateChainFile: certificates.valid.certificate, privateKeyFile: certificates.valid.key)
        let server = try TLSTestServer(context: context) { connection in
            guard !tls || connection.startTLS() else { return }
            handler(connection)
        }
        servers.append(server)
        return server
    }

    private func connect(to server: TLSTestServer, tls: Bool) throws -> BlockingStream {
        let socket = try BlockingSocket.connect(
            host: "127.0.0.1", port: server.port, connectTimeoutMilliseconds: 2000, ioTimeoutMilliseconds: ioTimeoutMilliseconds)
        guard tls else { return socket }
        let context = try TLSClientContext(trustedCertificatesFile: try TestCertificates.shared().authority)
        return try BlockingTLSStream(context: context, over: socket, host: "127.0.0.1")
    }

    private func silentPeerTimesOutTheRead(tls: Bool) throws {
        let released = released
        let server = try server(tls: tls) { _ in released.wait() }
        let stream = try connect(to: server, tls: tls)
        defer { stream.close() }
        XCTAssertThrowsError(try stream.read(max: 64)) { error in
            XCTAssertEqual((error as? BlockingStreamError)?.kind, .timedOut, "\(error)")
        }
    }

    func testASilentPeerEndsTheReadWithATimeout() throws { try silentPeerTimesOutTheRead(tls: false) }
    func testASilentPeerEndsATLSReadWithATimeout() throws { try silentPeerTimesOutTheRead(tls: true) }

    /// The peer never reads: once both sides' buffers are full, a write must give up, not block.
    private func peerThatNeverReadsTimesOutTheWrite(tls: Bool) throws {
        let released = released
        let server = try server(tls: tls) { _ in released.wait() }
        let stream = try connect(to: server, tls: tls)
        defer { stream.close() }
        let chunk = [UInt8](repeating: 0x61, count: 1 << 20)
        var written = 0
        XCTAssertThrowsError(
            try {
                // 256 MiB is far more than loopback buffers hold; a write that never stopped would end the loop instead.
                for _ in 0..<256 {
                    try stream.write(chunk)
                    written += chunk.count
                }
            }()
        ) { error in
            XCTAssertEqual((error as? BlockingStreamError)?.kind, .timedOut, "\(error)")
        }
        XCTAssertLessThan(written, 256 << 20)
    }

    func testAPeerThatNeverReadsEndsTheWriteWithATimeout() throws { try peerThatNeverReadsTimesOutTheWrite(tls: false) }
    func testAPeerThatNeverReadsEndsATLSWriteWithATimeout() throws { try peerThatNeverReadsTimesOutTheWrite(tls: true) }

    func testAPeerThatHangsUpReadsAsTheEndAndFailsLaterWrites() throws {
        let server = try server(tls: false) { _ in }
        let stream = try connect(to: server, tls: false)
        defer { stream.close() }
        XCTAssertEqual(try stream.read(max: 64), [])
        XCTAssertThrowsError(
            try {
                // The first writes may still land in the kernel's buffer; the reset answers a later one.
                for _ in 0..<1000 { try stream.write([UInt8](repeating: 0x61, count: 1024)) }
            }()
        ) { error in
            XCTAssertEqual((error as? BlockingStreamError)?.kind, .failed, "\(error)")
        }
    }

    func testNobodyListeningIsUnreachableAndNamesTheAddress() throws {
        let server = try server(tls: false) { _ in }
        let port = server.port
        server.stop()
        servers = []
        XCTAssertThrowsError(
            try BlockingSocket.connect(host: "127.0.0.1", port: port, connectTimeoutMilliseconds: 2000, ioTimeoutMilliseconds: 2000)
        ) { error in
            let failure = error as? BlockingStreamError
            XCTAssertEqual(failure?.kind, .unreachable, "\(error)")
            XCTAssertTrue(failure?.detail.contains("127.0.0.1:\(port)") == true, "\(error)")
        }
    }

    func testBytesArriveInOrderBothWays() throws {
        let server = try server(tls: true) { connection in
            while let line = connection.readLine(), !line.isEmpty { connection.write(line.uppercased() + "\n") }
        }
        let stream = try connect(to: server, tls: true)
        defer { stream.close() }
        try stream.write(Array("hello\n".utf8))
        var answer: [UInt8] = []
        while !answer.contains(0x0A) {
            let more = try stream.read(max: 3)
            XCTAssertFalse(more.isEmpty, "the server closed early")
            if more.isEmpty { break }
            answer += more
        }
        XCTAssertEqual(String(decoding: answer, as: UTF8.self), "HELLO\n")
    }
}
