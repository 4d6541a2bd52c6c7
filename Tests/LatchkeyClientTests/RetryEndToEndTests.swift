import Foundation
import LatchkeyClient
import StackLauncher
import XCTest

/// Retry-After honoured where retrying is safe, never for a call that is not idempotent. The
/// gateway's own metrics count the tries (no timing).
final class RetryEndToEndTests: ClientStackTestCase {
    override func stackOptions(_ options: inout Stack.Options) {
        // One token a second: a second call at once is refused with retry_after 1.
        options.serviceEnvironment["gateway"] = ["LATCHKEY_RATE_LIMITS": "default=1:1,auth=1:1"]
    }

    func testARefusedReadIsSentAgainAfterRetryAfterAndSucceeds() async throws {
        let client = try client()
        try await signInWithCodeUnderTheLimit(client)
        for _ in 0..<3 {
            let accounts = try await client.balances()
            XCTAssertEqual(accounts.count, 2)
        }
        XCTAssertGreaterThanOrEqual(try gatewayCount("accounts.balances", reason: "rate_limited"), 1, "the limit was met")
        let refusals = try gatewayCount("accounts.balances", reason: "rate_limited")
        XCTAssertEqual(try gatewayCount("accounts.balances"), 3 + refusals, "every refusal was followed by one more try")
    }

    func testARefusedTransferIsSentAgainWithTheSameKeyAndIsOneTransfer() async throws {
        let client = try client()
        try await signInWithCodeUnderTheLimit(client)
        _ = try await client.balances()  // spends the token: the transfer is refused at first
        let transfer = try await client.transfer(TransferRequest(from: .checking, to: .saving, amount: 700))
        XCTAssertGreaterThanOrEqual(try gatewayCount("accounts.transfer", reason: "rate_limited"), 1)
        let requestID = try XCTUnwrap(transfer.requestID)
        _ = try await code(for: requestID)
        XCTAssertEqual(outbox().filter { $0["request_id"]?.stringValue == requestID }.count, 1)
    }

    func testARefusedLoginIsNotSentAgainAndCarriesRetryAfter() async throws {
        let client = try client()
        // Three at once against one token a second: some are refused, none is repeated.
        let outcomes = await withTaskGroup(of: LatchkeyError?.self) { group in
            for _ in 0..<3 {
                group.addTask { await latchkeyError { try await client.signIn(username: "demo", password: "a wrong guess", deviceID: "x") } }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let refused = outcomes.filter { if case .rateLimited = $0 { true } else { false } }
        XCTAssertGreaterThanOrEqual(refused.count, 1, "\(outcomes)")
        XCTAssertTrue(refused.allSatisfy { ($0?.retryAfter ?? 0) >= 1 }, "\(refused)")
        XCTAssertEqual(outcomes.count - refused.count, outcomes.filter { $0 == .invalidCredentials }.count)
        XCTAssertEqual(try gatewayCount("identity.login"), 3, "three calls, three requests")
    }

    /// Sign-in and the code spend `auth` and `codes` tokens; waits out the auth bucket between them.
    private func signInWithCodeUnderTheLimit(_ client: LatchkeyClient) async throws {
        let signIn = { try await client.signIn(username: "demo", password: self.demoPassword, deviceID: "iphone-1") }
        _ = try await retryingRateLimit(signIn)
        let started = try await client.startCode(channel: .sms)
        let code = try await code(for: started.requestID)
        _ = try await retryingRateLimit { try await client.checkCode(code, requestID: started.requestID) }
    }

    /// The app's part for a non-idempotent call the limit refused: wait `retryAfter`, try again.
    private func retryingRateLimit<T>(_ body: () async throws -> T) async throws -> T {
        for _ in 0..<5 {
            do {
                return try await body()
            } catch LatchkeyError.rateLimited(let seconds, _) {
                try await Task.sleep(nanoseconds: UInt64(seconds) * 1_000_000_000)
            }
        }
        return try await body()
    }
}
