import Foundation
import LineProtocol
import Platform
import RPC
import TestSupport
import XCTest

/// SIGTERM lands while a burst is being worked on, in every executable: each run must end with
/// exit status 0. Before worker threads were joined (and OpenSSL's at-exit cleanup turned off),
/// `exit()` freed OpenSSL's global state while workers were still ending and running its
/// per-thread destructor: most runs ended in SIGABRT (double free) or SIGSEGV.
///
/// `LATCHKEY_SHUTDOWN_RUNS` sets the runs per executable (default 3, to keep `swift test`
/// short; CI may ask for 20).
final class ShutdownRaceEndToEndTests: XCTestCase {
    private static let runsPerExecutable = Int(ProcessInfo.processInfo.environment["LATCHKEY_SHUTDOWN_RUNS"] ?? "") ?? 3
    private static let connections = 16

    private var directory: String!
    private var launched: [LaunchedProcess] = []

    override func setUpWithError() throws {
        directory = try makeScratchDirectory("shutdown-race")
        // A crashing child must fail the test, not hang it: Swift's backtracer can stall on a
        // process whose threads are mid-exit. The children inherit this; tearDown restores it.
        setenv("SWIFT_BACKTRACE", "enable=no", 1)
    }

    override func tearDown() {
        unsetenv("SWIFT_BACKTRACE")
        for process in launched { process.kill() }
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }

    func testVerificationWithManyWorkersExitsZeroWhenTerminatedMidBurst() throws {
        try assertCleanExits("verification", ["--workers", "512"], method: "verification.start") { connection, index in
            ["number": .string(String(format: "+1555%03d%04d", 200 + connection, index)), "purpose": "transaction"]
        }
    }

    func testIdentityExitsZeroWhenTerminatedMidRegisterBurst() throws {
        try assertCleanExits("identity", ["--workers", "256", "--scrypt-log-n", "10"], pipelined: 16, method: "identity.register") { connection, index in
            let name = "burst\(connection)x\(index)x\(UInt32.random(in: 0...UInt32.max))"
            return ["username": .string(name), "password": "a long enough password", "email": .string("\(name)@example.com"), "phone": "5555550100"]
        }
    }

    func testAccountsExitsZeroWhenTerminatedWhileWorkersWaitOnIdentity() throws {
        let identity = try launch("identity", name: "identity-dependency", ["--workers", "64"])
        // Balances ask identity about the session first (workers wait on an RPC at SIGTERM);
        // deposits draw their ids from OpenSSL's generator on the worker threads.
        let upstream = ["--identity", identity.endpoint.description, "--verification", identity.endpoint.description]
        try assertCleanExits("accounts", ["--workers", "256"] + upstream, method: "accounts.balances") { connection, index in
            ["session": .string("lks_unknown\(connection)x\(index)")]
        }
        try assertCleanExits("accounts", ["--workers", "256"] + upstream, method: "accounts.deposit") { connection, index in
            ["user_id": .string("u\(connection)"), "account": "checking", "amount": 100, "idempotency_key": .string("burst-\(connection)-\(index)-\(UUID())")]
        }
    }

    func testResetExitsZeroWhenTerminatedWithBackgroundLookupsQueued() throws {
        let identity = try launch("identity", name: "identity-dependency", ["--workers", "64"])
        let options = [
            "--workers", "256", "--identity", identity.endpoint.description, "--reset-mail-workers", "64",
            "--reset-client-per-hour", "1000000", "--reset-address-per-hour", "1000",
        ]
        try assertCleanExits("reset", options, method: "reset.request") { connection, index in
            ["email": .string("nobody\(connection)x\(index)@example.com")]
        }
    }

    func testGatewayExitsZeroWhenTerminatedMidLoginBurst() throws {
        let identity = try launch("identity", name: "identity-dependency", ["--workers", "64", "--scrypt-log-n", "10", "--login-client-burst", "1000000"])
        // Only identity is exercised; the other services' addresses are never called by this burst.
        let address = identity.endpoint.description
        let options = [
            "--workers", "256", "--identity", address, "--verification", address, "--accounts", address, "--reset", address,
            "--rate-limits", "auth=0:1,default=0:1", "--http-listen", "127.0.0.1:0",
        ]
        try assertCleanExits("gateway", options, pipelined: 8, method: "identity.login") { connection, index in
            ["username": .string("nobody\(connection)x\(index)"), "password": "not the password", "device_id": "device-1"]
        }
    }

    // MARK: Helpers

    private func launch(_ executable: String, name: String, _ arguments: [String]) throws -> LaunchedProcess {
        let process = try LaunchedProcess(executable, name: name, arguments: arguments, directory: directory)
        launched.append(process)
        return process
    }

    /// Runs `executable` afresh for each run, pipelines the burst, sends SIGTERM once answers
    /// have started to come back, and checks the exit: status 0 after the `stopped` line.
    private func assertCleanExits(
        _ executable: String, _ arguments: [String], pipelined: Int = 64, method: String, params: (Int, Int) -> JSON,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        var statuses: [String] = []
        for run in 0..<Self.runsPerExecutable {
            let process = try launch(executable, name: "\(executable)-\(method)-\(run)", arguments)
            let clients = try (0..<Self.connections).map { _ in try LineClient(process.endpoint) }
            for (connection, client) in clients.enumerated() {
                var burst: [UInt8] = []
                for index in 0..<pipelined {
                    burst += RPCRequest(method: method, params: params(connection, index), id: .int(Int64(index))).encoded() + [10]
                }
                try client.sendRaw(burst)
            }
            // Mid-burst: the first answer is back, so the rest are queued or running.
            XCTAssertNotNil(try clients[0].readLine(), "\(executable) answers before the signal", file: file, line: line)
            Glibc.kill(process.process.processIdentifier, SIGTERM)
            let exited = process.process.exits(withinSeconds: 30)
            XCTAssertTrue(exited, "\(executable) run \(run) ends within 30 s of SIGTERM", file: file, line: line)
            guard exited else { return }
            let status = process.process.terminationReason == .exit ? "exit \(process.process.terminationStatus)" : "signal \(process.process.terminationStatus)"
            statuses.append(status)
            if status == "exit 0" {
                XCTAssertTrue(process.log.contains("\"msg\":\"stopped\""), "\(executable) run \(run) logs its stop", file: file, line: line)
            }
        }
        XCTAssertEqual(statuses, Array(repeating: "exit 0", count: Self.runsPerExecutable), "\(executable): every SIGTERM ends in exit 0", file: file, line: line)
    }
}
