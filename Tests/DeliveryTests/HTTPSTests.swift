import Delivery
import Foundation
import HTTP
import Platform
import XCTest

/// TLS against `openssl s_server -www` with a throwaway self-signed certificate for `localhost`:
/// trusted through `caFile` it works (SNI and host name checked); otherwise the handshake is refused.
final class HTTPSTests: XCTestCase {
    var directory: String!
    var server: Process?
    var port = 0

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") else { throw XCTSkip("no openssl binary") }
        directory = NSTemporaryDirectory() + "https-test-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try startServer(subjectAltName: "DNS:localhost")
    }

    /// (Re)starts `s_server` with a fresh self-signed certificate naming `subjectAltName`.
    private func startServer(subjectAltName: String) throws {
        stopServer()
        try run("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=\(subjectAltName)",
            "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem",
        ])
        for _ in 0..<5 {
            port = Int.random(in: 20_000...60_000)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", directory + "/cert.pem", "-key", directory + "/key.pem", "-www", "-quiet"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            server = process
            if waitForPort() { return }
            stopServer()
        }
        throw XCTSkip("openssl s_server did not start")
    }

    private func stopServer() {
        if let server, server.isRunning {
            server.terminate()
            server.waitUntilExit()
        }
        server = nil
    }

    override func tearDown() {
        stopServer()
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }

    private func run(_ path: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw XCTSkip("openssl req failed") }
    }

    private func waitForPort() -> Bool {
        for _ in 0..<100 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            close(fd)
            if connected == 0 { return true }
            usleep(50_000)
        }
        return false
    }

    func testTrustedCertificateWorks() throws {
        let client = try HTTPClient(timeoutMilliseconds: 3000, caFile: directory + "/cert.pem")
        let response = try client.send(HTTPClient.Request(method: "GET", url: try HTTPURL("https://localhost:\(port)/")))
        XCTAssertEqual(response.status, 200)
        XCTAssertFalse(response.body.isEmpty)
    }

    func testUntrustedCertificateIsRefused() throws {
        let client = try HTTPClient(timeoutMilliseconds: 3000)
        XCTAssertThrowsError(try client.send(HTTPClient.Request(method: "GET", url: try HTTPURL("https://localhost:\(port)/")))) { error in
            XCTAssertTrue(String(describing: error).contains("TLS handshake") || String(describing: error).contains("not trusted"), "\(error)")
        }
    }

    func testAnIPAddressURLIsVerifiedAgainstTheCertificatesIPAddress() throws {
        try startServer(subjectAltName: "IP:127.0.0.1")
        let client = try HTTPClient(timeoutMilliseconds: 3000, caFile: directory + "/cert.pem")
        let response = try client.send(HTTPClient.Request(method: "GET", url: try HTTPURL("https://127.0.0.1:\(port)/")))
        XCTAssertEqual(response.status, 200)
    }

    func testHostNameMismatchIsRefused() throws {
        let client = try HTTPClient(timeoutMilliseconds: 3000, caFile: directory + "/cert.pem")
        XCTAssertThrowsError(try client.send(HTTPClient.Request(method: "GET", url: try HTTPURL("https://127.0.0.1:\(port)/"))), "the certificate names localhost, not 127.0.0.1")
    }
}
