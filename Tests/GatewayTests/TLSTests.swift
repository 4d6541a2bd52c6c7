import Foundation
@testable import Gateway
import LineProtocol
import Platform
import RPC
import ServerTestSupport
import TestSupport
import TLS
import XCTest


/// TLS on the public listener, with a self-signed certificate made here, spoken to by OpenSSL clients.
final class TLSTests: XCTestCase {
    private var gateway: GatewayUnderTest?
    private var directory: String!

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "gateway-tls-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let status = try run("/usr/bin/env", [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-subj", "/CN=localhost", "-days", "1", "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem",
        ]).status
        XCTAssertEqual(status, 0)
        let context = try TLSServerContext(certificateChainFile: directory + "/cert.pem", privateKeyFile: directory + "/key.pem")
        var limits = ServerLimits()
        limits.lineTimeoutMilliseconds = 500
        gateway = try GatewayUnderTest(endpoints: ["identity": [Endpoint(host: "127.0.0.1", port: 1)]], limits: limits) { server in
            server.makeTransport = { socket in try context.makeTransport(for: socket) }
        }
    }

    override func tearDown() {
        gateway?.shutdown()
        gateway = nil
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs a program with `input` on stdin. With `holdInputUntil`, stdin stays open until the
    /// output holds that text (an interactive client must not see end of input before its answer).
    private func run(_ executable: String, _ arguments: [String], input: String = "", holdInputUntil expected: String? = nil, timeoutSeconds: Double = 20) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        let inputPipe = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = inputPipe
        let received = SharedList<Data>()
        // A reading thread, not a `readabilityHandler`: that is a libdispatch source on the
        // pipe, and the pipe was closed (its number soon reused) before the source's asynchronous
        // cancellation had finished, which crashed libdispatch's manager thread under the thread
        // sanitizer.
        let reading = output.fileHandleForReading
        try process.run()
        let reader = JoinableThread(name: "test-output") {
            while case let chunk = reading.availableData, !chunk.isEmpty { received.append(chunk) }
        }
        inputPipe.fileHandleForWriting.write(Data(input.utf8))
        let text = { String(decoding: received.all.reduce(Data(), +), as: UTF8.self) }
        if let expected { eventually(timeoutSeconds: timeoutSeconds) { text().contains(expected) || !process.isRunning } }
        try inputPipe.fileHandleForWriting.close()
        if !eventually(timeoutSeconds: timeoutSeconds, { !process.isRunning }) { process.terminate() }
        process.waitUntilExit()
        reader.join()
        return (process.terminationStatus, text())
    }

    func testPythonSSLClientTalksLineProtocolOverTLS12AndUp() throws {
        let port = gateway!.port
        let script = """
            import socket, ssl, sys, json
            context = ssl.create_default_context(cafile=sys.argv[2])
            results = []
            for version in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
                context.minimum_version = version
                context.maximum_version = version
                with socket.create_connection(("127.0.0.1", int(sys.argv[1]))) as raw:
                    with context.wrap_socket(raw, server_hostname="localhost") as tls:
                        batch = "[" + ",".join('{"jsonrpc":"2.0","id":%d,"method":"gateway.ping"}' % i for i in range(100)) + "]\\n"
                        tls.sendall(('{"jsonrpc":"2.0","id":"one","method":"gateway.ping"}\\n' + batch * 50).encode())
                        data = b""
                        while data.count(b"\\n") < 51:
                            chunk = tls.recv(65536)
                            if not chunk: break
                            data += chunk
                        lines = data.split(b"\\n")
                        first = json.loads(lines[0])
                        answers = sum(len(json.loads(line)) for line in lines[1:51])
                        results.append("%s %s %d" % (tls.version(), first["result"]["pong"], answers))
            old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            old.check_hostname = False
            old.verify_mode = ssl.CERT_NONE
            old.maximum_version = ssl.TLSVersion.TLSv1_1
            try:
                old.minimum_version = ssl.TLSVersion.TLSv1
                with socket.create_connection(("127.0.0.1", int(sys.argv[1]))) as raw:
                    with old.wrap_socket(raw) as tls:
                        results.append("old accepted")
            except (ssl.SSLError, OSError, ValueError):
                results.append("old refused")
            print("|".join(results))
            """
        let result = try run("/usr/bin/env", ["python3", "-c", script, String(port), directory + "/cert.pem"])
        XCTAssertEqual(result.output.trimmingCharacters(in: .whitespacesAndNewlines), "TLSv1.2 True 5000|TLSv1.3 True 5000|old refused")
        // Plain text on the TLS port gets nowhere, and the listener keeps serving.
        let plain = try TestLineClient(port: port, timeoutMilliseconds: 2000)
        _ = plain.send(raw: #"{"jsonrpc":"2.0","id":1,"method":"gateway.ping"}"# + "\n")
        XCTAssertFalse(plain.readLine()?.contains("pong") ?? false)
    }

    func testAClientThatNeverFinishesTheHandshakeIsCutOff() throws {
        let stalled = try TestLineClient(port: gateway!.port, timeoutMilliseconds: 3000)
        XCTAssertTrue(stalled.send(raw: "\u{16}\u{03}\u{01}"))
        // The server ends it (end of input or a reset), not the client's own read timeout.
        XCTAssertTrue(stalled.waitForClose())
    }

    func testOpenSSLSClientWorksAsADebuggingClient() throws {
        let port = gateway!.port
        let result = try run(
            "/usr/bin/env", ["openssl", "s_client", "-connect", "127.0.0.1:\(port)", "-quiet", "-no_ign_eof"],
            input: #"{"jsonrpc":"2.0","id":7,"method":"gateway.ping"}"# + "\n", holdInputUntil: #""id":7"#, timeoutSeconds: 5)
        XCTAssertTrue(result.output.contains(#"{"jsonrpc":"2.0","id":7,"result":{"pong":true}}"#), result.output)
    }
}
