import Foundation
import Platform
import StackLauncher
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
            try waitUntil(deadlineSeconds: 20, "\(executable) wrote nothing") { fileSize(atPath: logPath) > 0 || !process.isRunning }
            kill(process.processIdentifier, SIGTERM)
            let ended = waitForExit(process, deadlineSeconds: 20)
            if !ended { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
            XCTAssertTrue(ended, "\(executable) ignored a SIGTERM sent during start-up")
            XCTAssertEqual(process.terminationReason, .exit, "\(executable) was killed by the signal instead of draining")
            XCTAssertEqual(process.terminationStatus, 0, "\(executable): \(Stack.readFile(logPath))")
        }
    }

    private func waitUntil(deadlineSeconds: Double, _ message: String, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(deadlineSeconds)
        while !condition() {
            guard Date() < deadline else { throw StartupError(description: message) }
            usleep(1_000)
        }
    }

    private func waitForExit(_ process: Process, deadlineSeconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(deadlineSeconds)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        return !process.isRunning
    }
}

private struct StartupError: Error, CustomStringConvertible {
    let description: String
}
