import Foundation
import Secrets
import ServiceKit
import XCTest

@testable import Identity

/// Measures logins/s through a real gateway + identity next to bare scrypt verifications/s.
/// Slow (production scrypt cost): runs only with LATCHKEY_BENCH_LOGIN=1
/// (LATCHKEY_SCRYPT_LOG_N, LATCHKEY_BENCH_SECONDS and LATCHKEY_BENCH_CONNECTIONS adjust it).
final class LoginBenchmarkTests: XCTestCase {
    func testLoginThroughputNextToBareScrypt() throws {
        let environment = ProcessInfo.processInfo.environment
        try XCTSkipUnless(environment["LATCHKEY_BENCH_LOGIN"] == "1", "set LATCHKEY_BENCH_LOGIN=1 to measure")
        let logN = Int(environment["LATCHKEY_SCRYPT_LOG_N"] ?? "15") ?? 15
        let seconds = Double(environment["LATCHKEY_BENCH_SECONDS"] ?? "10") ?? 10
        let connections = Int(environment["LATCHKEY_BENCH_CONNECTIONS"] ?? "4") ?? 4
        let directory = NSTemporaryDirectory() + "identity-bench-\(UUID().uuidString.prefix(8))"
        var options = Stack.Options(binDirectory: Stack.siblingBinaryDirectory(), dataDirectory: directory)
        options.environment["LATCHKEY_SCRYPT_LOG_N"] = String(logN)
        let stack = try Stack.start(options)
        defer {
            stack.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
        let parameters = ScryptParameters(logN: logN, r: 8, p: 1)
        let pid = stack.member("identity").process.processIdentifier
        let scryptCPU = try LoginBenchmark.scryptCPUSecondsPerVerification(parameters: parameters, count: 9)
        let cpuBefore = LoginBenchmark.processCPUSeconds(pid: pid) ?? 0
        let figures = try LoginBenchmark.run(gateway: stack.gateway, parameters: parameters, connections: connections, seconds: seconds)
        let loginCPU = ((LoginBenchmark.processCPUSeconds(pid: pid) ?? 0) - cpuBefore) / Double(max(1, figures.logins))
        print(String(
            format: "login bench: scrypt ln=%d: %.1f verifications/s bare; %.1f logins/s through the gateway (%d ok, %d errors, %d connections); ratio %.2f",
            logN, figures.scryptPerSecond, figures.loginsPerSecond, figures.logins, figures.errors, connections, figures.ratio))
        print(String(
            format: "login bench: CPU per bare scrypt verify %.1f ms; identity CPU per login %.1f ms (ratio %.2f; includes the registration)",
            scryptCPU * 1000, loginCPU * 1000, loginCPU / scryptCPU))
        XCTAssertEqual(figures.errors, 0)
        XCTAssertGreaterThan(figures.logins, 0)
    }
}
