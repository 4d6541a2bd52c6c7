import Foundation
import LineProtocol
import Platform
import RPC
import StackLauncher
import TestSupport
import XCTest

/// The project builds one binary, `latchkey`; the five service names are links to it, so the
/// five processes share its pages. `Stack` (like the image) starts every service through a link
/// named after it. Invoked by that name the binary must be that service in every way the stack
/// relies on: it listens, answers, calls the other services, and drains on SIGTERM with exit status 0.
final class MultiCallBinaryEndToEndTests: XCTestCase {
    private var directory: String!
    private var stack: Stack?

    override func setUpWithError() throws { directory = try makeScratchDirectory("multi-call") }

    override func tearDown() {
        stack?.stop()
        stack = nil
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testServiceNamesLinkedToTheToolRunTheWholeStack() throws {
        // An installed copy: a directory that holds `latchkey` and nothing else.
        let installed = (directory as NSString).appendingPathComponent("install")
        try FileManager.default.createDirectory(atPath: installed, withIntermediateDirectories: true)
        let tool = (Stack.siblingBinaryDirectory() as NSString).appendingPathComponent("latchkey")
        try FileManager.default.createSymbolicLink(atPath: (installed as NSString).appendingPathComponent("latchkey"), withDestinationPath: tool)
        var options = Stack.Options(binDirectory: installed, dataDirectory: (directory as NSString).appendingPathComponent("data"))
        options.environment["LATCHKEY_SCRYPT_LOG_N"] = "10"
        let stack = try Stack.start(options)
        self.stack = stack

        for member in stack.members {
            let pid = member.process.processIdentifier
            let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
            XCTAssertEqual(URL(fileURLWithPath: executable).resolvingSymlinksInPath().path, URL(fileURLWithPath: tool).resolvingSymlinksInPath().path, "\(member.service) runs the one binary")
            let argv0 = readTextFile("/proc/\(pid)/cmdline").split(separator: "\0").first.map(String.init) ?? ""
            XCTAssertEqual(URL(fileURLWithPath: argv0).lastPathComponent, member.service, "\(member.service) is started by its own name")
            XCTAssertNotNil(try? FileManager.default.destinationOfSymbolicLink(atPath: argv0), "\(argv0) is a link")
        }
        // A flow that crosses services: register and log in through the gateway (gateway -> identity).
        let gateway = try LineClient(stack.gateway)
        let user: JSON = ["username": "multicall", "password": "correct horse battery staple", "email": "multicall@example.com", "phone": "+15555550142"]
        XCTAssertNotNil(try gateway.result("identity.register", user)["user_id"]?.stringValue)
        let login = try gateway.result("identity.login", ["username": "multicall", "password": "correct horse battery staple", "device_id": "device-1"])
        XCTAssertNotNil(login["session"]?.stringValue)
        for service in ["identity", "verification", "accounts", "reset"] {
            XCTAssertEqual(try LineClient(stack.endpoint(service)).result("\(service).ping")["pong"], .bool(true), service)
        }
        for service in Stack.startOrder.reversed() {
            XCTAssertEqual(stack.terminate(service), 0, "\(service) drains and exits 0 on SIGTERM")
        }
    }

    /// `latchkey identity ARGS` is the identity service too: it listens, answers, drains on
    /// SIGTERM with exit status 0, and `latchkey gateway --help` is the gateway's help.
    func testAServiceNameAsTheToolsFirstArgumentRunsThatService() throws {
        let tool = (Stack.siblingBinaryDirectory() as NSString).appendingPathComponent("latchkey")
        let help = try runProgram(tool, ["gateway", "--help"])
        XCTAssertEqual(help.status, 0, help.output)
        XCTAssertTrue(help.output.hasPrefix("usage: gateway"), help.output)

        let logPath = (directory as NSString).appendingPathComponent("identity.log")
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let identity = Process()
        identity.executableURL = URL(fileURLWithPath: tool)
        identity.arguments = ["identity", "--listen", "127.0.0.1:0", "--data-dir", (directory as NSString).appendingPathComponent("identity")]
        identity.environment = ProcessInfo.processInfo.environment.merging(["LATCHKEY_SCRYPT_LOG_N": "10"]) { _, new in new }
        identity.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        identity.standardOutput = FileHandle.nullDevice
        identity.standardInput = FileHandle.nullDevice
        try identity.run()
        defer { if identity.isRunning { identity.terminate() } }
        var endpoint: Endpoint?
        waitUntil("latchkey identity listens", timeoutSeconds: 20) {
            let log = readTextFile(logPath)
            guard let range = log.range(of: "\"net.listen\":\""), let end = log[range.upperBound...].firstIndex(of: "\"") else { return false }
            endpoint = Endpoint(String(log[range.upperBound..<end]))
            return true
        }
        let address = try XCTUnwrap(endpoint, readTextFile(logPath))
        XCTAssertEqual(try LineClient(address).result("identity.ping")["pong"], .bool(true))
        XCTAssertTrue(readTextFile(logPath).contains("\"service\":\"identity\""), readTextFile(logPath))
        kill(identity.processIdentifier, SIGTERM)
        identity.waitUntilExit()
        XCTAssertEqual(identity.terminationStatus, 0, readTextFile(logPath))
    }
}
