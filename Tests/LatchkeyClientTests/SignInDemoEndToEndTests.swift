import Foundation
import LatchkeyClient
import StackLauncher
import XCTest

/// Examples/SignInDemo, built as a program of its own against the client's public surface,
/// signs the demo user in (the code typed on its stdin) and prints balances.
final class SignInDemoEndToEndTests: ClientStackTestCase {
    func testTheExampleSignsInTheDemoUserWithTheSMSCodeAndPrintsBalances() async throws {
        let printed = try await runDemo {
            // The code it asked for: the newest login SMS to the demo phone.
            let message = try await self.awaitMessage { $0["channel"]?.stringValue == "sms" && $0["to"]?.stringValue == "+15555550100" }
            return try await self.code(for: try XCTUnwrap(message["request_id"]?.stringValue))
        }
        XCTAssertTrue(printed.contains("checking: 5000.00 USD\nsaving: 10000.00 USD"), printed)
    }

    func testTheExamplePaysAnOwedAuthenticatorCode() async throws {
        let client = try client()
        try await signInWithCode(client)
        let enrollment = try await client.enrollAuthenticator()
        let app = try XCTUnwrap(AuthenticatorApp(base32: enrollment.secret))
        let step = AuthenticatorApp.step(at: Date())
        try await client.activateAuthenticator(code: app.code(step: step))
        let sms = { self.outbox().filter { $0["channel"] == "sms" }.count }
        let smsBefore = sms()

        let printed = try await runDemo { app.code(step: step + 1) }
        XCTAssertTrue(printed.contains("authenticator app"), printed)
        XCTAssertTrue(printed.contains("checking: 5000.00 USD"), printed)
        XCTAssertEqual(sms(), smsBefore, "no SMS when the app's code is owed")
    }

    /// Runs the example against the stack, types `code()` on its stdin, and returns what it printed.
    func testTheExampleChangesThePasswordAfterTheCodeItPaid() async throws {
        let other = try client()
        try await signInWithCode(other)
        let earlier = Set(outbox().compactMap { $0["request_id"]?.stringValue })
        let printed = try await runDemo(["--new-password", "a much longer passphrase"]) {
            let message = try await self.awaitMessage {
                $0["channel"]?.stringValue == "sms" && !earlier.contains($0["request_id"]?.stringValue ?? "")
            }
            return try await self.code(for: try XCTUnwrap(message["request_id"]?.stringValue))
        }
        XCTAssertTrue(printed.contains("password changed; 1 other session signed out"), printed)
        await XCTAssertThrowsLatchkeyError(.unauthenticated) { _ = try await other.balances() }
        let fresh = try client()
        await XCTAssertThrowsLatchkeyError(.invalidCredentials) {
            _ = try await fresh.signIn(username: "demo", password: self.demoPassword, deviceID: "after-change")
        }
        let signedIn = try await fresh.signIn(username: "demo", password: "a much longer passphrase", deviceID: "after-change")
        XCTAssertNotNil(signedIn.sessionID)
    }

    private func runDemo(_ extra: [String] = [], code: () async throws -> String) async throws -> String {
        let executable = (Stack.siblingBinaryDirectory() as NSString).appendingPathComponent("SignInDemo")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--url", try baseURL.absoluteString, "--password", demoPassword, "--device-id", "demo-run"] + extra
        let input = Pipe(), output = Pipe(), errors = Pipe()
        (process.standardInput, process.standardOutput, process.standardError) = (input, output, errors)
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        input.fileHandleForWriting.write(Data((try await code() + "\n").utf8))
        try input.fileHandleForWriting.close()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let complaint = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 0, complaint)
        return printed
    }
}
