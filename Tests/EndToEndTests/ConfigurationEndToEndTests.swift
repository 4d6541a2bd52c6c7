import Foundation
import LineProtocol
import Platform
import RPC
import ServiceKit
import StackLauncher
import TestSupport
import XCTest

/// Configuration fails closed, on the real executables: a `LATCHKEY_*` name no Latchkey
/// executable knows, or a flag missing its value, stops the process with status 2 and a
/// message that names the fix; a service creates its data directory and files owner-only.
final class ConfigurationEndToEndTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "latchkey-config-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A process that cannot reach or be reached by anything else on the machine.
    private func isolatedEnvironment(_ extra: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LATCHKEY_") }
        for service in ["IDENTITY", "VERIFICATION", "ACCOUNTS", "RESET"] { environment["LATCHKEY_\(service)"] = "127.0.0.1:1" }
        environment["LATCHKEY_HTTP_LISTEN"] = "127.0.0.1:0"
        environment["LATCHKEY_DATA_DIR"] = directory + "/data"
        environment.merge(extra) { _, new in new }
        return environment
    }

    func testAnUnknownLatchkeyVariableStopsEveryExecutableAndNamesTheNearestKnownOne() throws {
        let environment = isolatedEnvironment(["LATCHKEY_SERVICE_TOKNE": "s3cret-typo"])
        var runs = try ["gateway", "identity", "verification", "accounts", "reset"].map { name in
            try ChildProcess(directory: directory, executable: name, arguments: ["--listen", "127.0.0.1:0"], environment: environment)
        }
        runs.append(try ChildProcess(directory: directory, executable: "latchkey", arguments: ["call", "gateway.ping", "--gateway", "127.0.0.1:1"], environment: environment))
        for run in runs {
            let status = run.waitForExit(timeoutSeconds: 20)
            XCTAssertEqual(status, 2, "\(run.executable): \(run.standardError)")
            XCTAssertTrue(run.standardError.contains("LATCHKEY_SERVICE_TOKNE"), "\(run.executable) names the unknown variable: \(run.standardError)")
            XCTAssertTrue(run.standardError.contains("LATCHKEY_SERVICE_TOKEN"), "\(run.executable) names the nearest known one: \(run.standardError)")
            XCTAssertFalse(run.standardError.contains("s3cret-typo"), "\(run.executable) echoed the value")
        }
    }

    func testTheSharedListOfNamesIsExactlyTheOptionsTable() throws {
        let run = try ChildProcess(directory: directory, executable: "latchkey", arguments: ["options"], environment: isolatedEnvironment([:]))
        XCTAssertEqual(run.waitForExit(timeoutSeconds: 20), 0, run.standardError)
        let table = run.standardOutput
        let listed = Set(table.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("| `LATCHKEY_") else { return nil }
            return line.dropFirst(3).split(separator: "`").first.map(String.init)
        })
        XCTAssertGreaterThan(listed.count, 100, table)
        XCTAssertEqual(listed.subtracting(KnownEnvironment.optionNames).sorted(), [], "in `latchkey options`, missing from KnownEnvironment")
        XCTAssertEqual(KnownEnvironment.optionNames.subtracting(listed).sorted(), [], "in KnownEnvironment, no executable reads it")
    }

    func testAFlagMissingItsValueStopsTheExecutable() throws {
        let run = try ChildProcess(
            directory: directory, executable: "identity", arguments: ["--service-token", "--listen", "127.0.0.1:0"], environment: isolatedEnvironment([:]))
        XCTAssertEqual(run.waitForExit(timeoutSeconds: 20), 2, run.standardError)
        XCTAssertTrue(run.standardError.contains("--service-token needs a value"), run.standardError)
    }

    func testEveryExecutableAcceptsTheVariablesOfTheOthers() throws {
        // The one `.env` compose gives every service, and what `latchkey up` passes its children.
        let environment = isolatedEnvironment([
            "LATCHKEY_DEMO_PASSWORD": "demo password", "LATCHKEY_SMTP_URL": "smtp://mail:25",
            "LATCHKEY_SESSION_CACHE_MS": "1000", "LATCHKEY_CURRENCY": "EUR", "LATCHKEY_SCRYPT_LOG_N": "10",
        ])
        let run = try ChildProcess(directory: directory, executable: "identity", arguments: ["--listen", "127.0.0.1:0"], environment: environment)
        defer { run.terminate() }
        XCTAssertTrue(run.waitForLog("\"msg\":\"listening\"", timeoutSeconds: 20), run.standardError)
    }

    func testAServiceCreatesItsDataDirectoryAndDatabaseOwnerOnly() throws {
        let dataDirectory = directory + "/fresh/data"
        let environment = isolatedEnvironment(["LATCHKEY_DATA_DIR": dataDirectory, "LATCHKEY_SCRYPT_LOG_N": "10"])
        let run = try ChildProcess(directory: directory, executable: "identity", arguments: ["--listen", "127.0.0.1:0"], environment: environment)
        defer { run.terminate() }
        XCTAssertTrue(run.waitForLog("\"msg\":\"listening\"", timeoutSeconds: 20), run.standardError)
        let endpoint = try XCTUnwrap(run.listenEndpoint)
        _ = try LineClient(endpoint).result("identity.register", [
            "username": "vera", "password": "correct horse battery", "email": "vera@example.com", "phone": "+15555550125",
        ])
        XCTAssertEqual(FileModes.permissions(dataDirectory), 0o700)
        XCTAssertEqual(FileModes.permissions(directory + "/fresh"), 0o700, "directories it had to create on the way")
        for suffix in ["", "-wal", "-shm"] {
            XCTAssertEqual(FileModes.permissions("\(dataDirectory)/identity.sqlite\(suffix)"), 0o600, "identity.sqlite\(suffix)")
        }
    }
}

/// One real executable from the build directory, its stderr captured in a file.
final class ChildProcess {
    let executable: String
    private let process = Process()
    private let logPath: String

    init(directory: String, executable: String, arguments: [String], environment: [String: String]) throws {
        self.executable = executable
        logPath = "\(directory)/\(executable)-\(UUID().uuidString.prefix(6)).stderr"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: executablePath(executable))
        process.arguments = arguments
        process.environment = environment
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        _ = FileManager.default.createFile(atPath: logPath + ".out", contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath + ".out"))
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    var standardError: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
    var standardOutput: String { (try? String(contentsOfFile: logPath + ".out", encoding: .utf8)) ?? "" }

    /// The exit status, or nil when it still runs at the deadline (it is then killed).
    func waitForExit(timeoutSeconds: Double) -> Int32? {
        guard process.exits(withinSeconds: timeoutSeconds) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        return process.terminationStatus
    }

    func waitForLog(_ text: String, timeoutSeconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while Date() < deadline {
            if standardError.contains(text) { return true }
            if !process.isRunning { return false }
            usleep(20_000)
        }
        return false
    }

    /// Where it listens, from its `listening` log line.
    var listenEndpoint: Endpoint? {
        let log = standardError
        guard let range = log.range(of: "\"net.listen\":\""), let end = log[range.upperBound...].firstIndex(of: "\"") else { return nil }
        return Endpoint(String(log[range.upperBound..<end]))
    }

    func terminate() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
}
