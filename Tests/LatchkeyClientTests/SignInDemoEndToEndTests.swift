import Foundation
import ServiceKit
import XCTest

/// Examples/SignInDemo, built as a program of its own against the client's public surface,
/// signs the demo user in (the code typed on its stdin, read from the outbox) and prints balances.
final class SignInDemoEndToEndTests: ClientStackTestCase {
    func testTheExampleSignsInTheDemoUserAndPrintsBalances() async throws {
        let executable = (Stack.siblingBinaryDirectory() as NSString).appendingPathComponent("SignInDemo")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--url", try baseURL.absoluteString, "--password", demoPassword, "--device-id", "demo-run"]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        (process.standardInput, process.standardOutput, process.standardError) = (input, output, errors)
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        // The code it asked for: the newest login SMS to the demo phone.
        let message = try await awaitMessage { $0["channel"]?.stringValue == "sms" && $0["to"]?.stringValue == "+15555550100" }
        let requestID = try XCTUnwrap(message["request_id"]?.stringValue)
        input.fileHandleForWriting.write(Data((try await code(for: requestID) + "\n").utf8))
        try input.fileHandleForWriting.close()

        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let complaint = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 0, complaint)
        XCTAssertTrue(printed.contains("checking: 5000.00 USD\nsaving: 10000.00 USD"), printed)
    }
}
