import XCTest

@testable import Delivery

/// The providers' and SMTP's back-off, counted through the injected pause instead of a clock.
final class DeliveryRetryPolicyTests: XCTestCase {
    private struct Failure: Error {
        let permanent: Bool
    }

    private func pauses(_ policy: RetryPolicy, failures: [Failure]) -> (pauses: [Int], tries: Int, thrown: Bool) {
        var pauses: [Int] = []
        var tries = 0
        var thrown = false
        do {
            try policy.run({ () throws(Failure) in
                tries += 1
                if tries <= failures.count { throw failures[tries - 1] }
            }, isPermanent: \.permanent, gaveUp: { error, _ in error }, pause: { pauses.append($0) })
        } catch {
            thrown = true
        }
        return (pauses, tries, thrown)
    }

    func testTransientFailuresBackOffDoublingUpToTheCeiling() {
        let policy = RetryPolicy(maxAttempts: 5, initialBackoffMilliseconds: 10, maxBackoffMilliseconds: 25)
        let outcome = pauses(policy, failures: Array(repeating: Failure(permanent: false), count: 4))
        XCTAssertEqual(outcome.pauses, [10, 20, 25, 25])
        XCTAssertEqual(outcome.tries, 5)
        XCTAssertFalse(outcome.thrown, "the fifth try succeeded")
    }

    func testAPermanentFailureStopsWithoutWaiting() {
        let policy = RetryPolicy(maxAttempts: 5, initialBackoffMilliseconds: 10, maxBackoffMilliseconds: 25)
        let outcome = pauses(policy, failures: [Failure(permanent: false), Failure(permanent: true)])
        XCTAssertEqual(outcome.pauses, [10])
        XCTAssertEqual(outcome.tries, 2)
        XCTAssertTrue(outcome.thrown)
    }

    func testAttemptsRunOutAfterTheLastTryWithoutAFinalPause() {
        let policy = RetryPolicy(maxAttempts: 3, initialBackoffMilliseconds: 10, maxBackoffMilliseconds: 8000)
        let outcome = pauses(policy, failures: Array(repeating: Failure(permanent: false), count: 9))
        XCTAssertEqual(outcome.pauses, [10, 20])
        XCTAssertEqual(outcome.tries, 3)
        XCTAssertTrue(outcome.thrown)
    }
}
