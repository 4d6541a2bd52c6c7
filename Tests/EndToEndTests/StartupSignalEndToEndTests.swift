import Foundation
import Platform
import StackLauncher
import TestSupport
import XCTest

/// A stop request can come at any moment, also while a process is still starting (an
/// orchestrator that gives up on a slow start, a test that is done early). Before, a SIGTERM
/// before the signal source existed either killed the process (status: signal 15) or, once
/// SIG_IGN was set, was dropped, and the process then served forever. Now it waits, pending,
/// and the process drains and exits 0.
final class StartupSignalEndToEndTests: XCTestCase {
    func testSIGTERMDuringStartupEndsEveryExecutableWithStatusZero() throws {
        for executable in ["identity", "verification", "accounts", "reset", "gateway"] {
            let directory = NSTemporaryDirectory() + "startup-signal-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let logPath = directory + "/log"
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executablePath(executable))
            process.arguments = ["--listen", "127.0.0.1:0", "--data-dir", directory]
            var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LATCHKEY_") }
            environment["LATCHKEY_HTTP_LISTEN"] = executable == "gateway" ? "127.0.0.1:0" : nil
            process.environment = environment
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            // The first log line: the process is inside its start-up, before it listens.
            let started = eventually(timeoutSeconds: 20, pollMilliseconds: 1) { fileSize(atPath: logPath) > 0 || !process.isRunning }
            guard started else { throw StartupError(description: "\(executable) wrote nothing") }
            kill(process.processIdentifier, SIGTERM)
            let ended = process.exits(withinSeconds: 20)
            if !ended { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
            XCTAssertTrue(ended, "\(executable) ignored a SIGTERM sent during start-up")
            XCTAssertEqual(process.terminationReason, .exit, "\(executable) was killed by the signal instead of draining")
            XCTAssertEqual(process.terminationStatus, 0, "\(executable): \(Stack.readFile(logPath))")
        }
    }
}

private struct StartupError: Error, CustomStringConvertible {
    let description: String
}
