import Foundation
import LatchkeyClient
import XCTest

/// A service killed with SIGKILL: a read is retried, then reported; after the restart it works.
final class UnavailableEndToEndTests: ClientStackTestCase {
    func testAnUnreachableServiceIsRetriedForAReadThenReportedAndRecovers() async throws {
        let client = try self.client(retryPolicy: RetryPolicy(maxAttempts: 3, maxDelaySeconds: 10, baseDelaySeconds: 0.05))
        try await signInWithCode(client)
        stack.kill("accounts")
        let error = await latchkeyError { try await client.balances() }
        guard case .unavailable = error else { return XCTFail("expected unavailable, got \(String(describing: error))") }
        XCTAssertEqual(try gatewayCount("accounts.balances", reason: "unavailable"), 3, "a read is tried three times")
        try stack.restart("accounts")
        let recovered = try await client.balances()
        XCTAssertEqual(recovered.count, 2)
    }

    func testAWriteToAnUnreachableServiceIsTriedOnce() async throws {
        let client = try self.client(retryPolicy: RetryPolicy(maxAttempts: 3, maxDelaySeconds: 10, baseDelaySeconds: 0.05))
        try await signInWithCode(client)
        stack.kill("accounts")
        let error = await latchkeyError { try await client.confirmTransfer(transferID: "tr_AAAAAAAAAAAAAAAAAAAAAA", code: "123456") }
        guard case .unavailable = error else { return XCTFail("expected unavailable, got \(String(describing: error))") }
        XCTAssertEqual(try gatewayCount("accounts.confirm"), 1)
    }
}
