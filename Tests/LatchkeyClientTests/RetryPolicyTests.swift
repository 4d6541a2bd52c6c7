import XCTest

@testable import LatchkeyClient

/// The rule, without a network: the end-to-end proof is in RetryEndToEndTests.
final class RetryPolicyTests: XCTestCase {
    let policy = RetryPolicy(maxAttempts: 3, maxDelaySeconds: 10, baseDelaySeconds: 0.25)

    func testANonIdempotentCallIsNeverRetried() {
        for error: LatchkeyError in [.rateLimited(retryAfter: 1, scope: nil), .unavailable(sent: false), .network("lost"), .timeout] {
            XCTAssertNil(policy.delay(after: error, attempt: 1, retryClass: .never), "\(error)")
        }
    }

    func testRetryAfterIsWaitedForWhenRetryingIsSafe() {
        XCTAssertEqual(policy.delay(after: .rateLimited(retryAfter: 4, scope: nil), attempt: 1, retryClass: .safe), 4)
        XCTAssertEqual(policy.delay(after: .rateLimited(retryAfter: 4, scope: nil), attempt: 2, retryClass: .idempotencyKey), 4)
        XCTAssertEqual(policy.delay(after: .unavailable(sent: true), attempt: 2, retryClass: .safe), 0.5)
    }

    func testNoRetryPastTheAttemptsOrTheLongestWaitOrForAnAnswerThatWillNotChange() {
        XCTAssertNil(policy.delay(after: .rateLimited(retryAfter: 1, scope: nil), attempt: 3, retryClass: .safe))
        XCTAssertNil(policy.delay(after: .rateLimited(retryAfter: 11, scope: nil), attempt: 1, retryClass: .safe))
        XCTAssertNil(policy.delay(after: .locked(retryAfter: 1), attempt: 1, retryClass: .safe))
        XCTAssertNil(policy.delay(after: .insufficientFunds, attempt: 1, retryClass: .idempotencyKey))
        XCTAssertNil(RetryPolicy.never.delay(after: .overloaded, attempt: 1, retryClass: .safe))
    }
}
