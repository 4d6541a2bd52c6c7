import Foundation
import TestSupport
import XCTest

@testable import Verification

class ConcurrencyTests: VerificationTestCase {
    func testRacingStartsForOneNumberSendOneCode() throws {
        let harness = try makeHarness { $0.perNumber = [SendLimit(count: 100, windowSeconds: 600)] }
        let outcomes = SharedList<String>()
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            do {
                outcomes.append("started:" + (try harness.start()))
            } catch VerificationError.concurrentVerification(let id) {
                outcomes.append("concurrent:" + id)
            } catch {
                outcomes.append("error:\(error)")
            }
        }
        let started = outcomes.all.filter { $0.hasPrefix("started:") }
        XCTAssertEqual(started.count, 1, "\(outcomes.all)")
        let id = String(started[0].dropFirst("started:".count))
        XCTAssertEqual(outcomes.all.filter { $0 == "concurrent:" + id }.count, 15)
        XCTAssertEqual(harness.provider.sent.count, 1)
    }

    func testRacingChecksVerifyOnceAndRacingWrongCodesNeverExceedTheLimit() throws {
        let harness = try makeHarness()
        let id = try harness.start()
        let code = harness.code(id)
        let outcomes = SharedList<String>()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            outcomes.append((try? harness.check(id, code)) == nil ? "refused" : "verified")
        }
        XCTAssertEqual(outcomes.all.filter { $0 == "verified" }.count, 1)

        let other = try harness.start(number: "+15555550150")
        let right = harness.code(other)
        let wrongOutcomes = SharedList<String>()
        DispatchQueue.concurrentPerform(iterations: 10) { _ in
            do {
                _ = try harness.check(other, wrong(right))
            } catch let error as VerificationError {
                wrongOutcomes.append(error.rpcError.reasonText ?? "?")
            } catch {
                wrongOutcomes.append("\(error)")
            }
        }
        XCTAssertEqual(wrongOutcomes.all.filter { $0 == "invalid_code" }.count, 2)
        XCTAssertEqual(wrongOutcomes.all.filter { $0 == "too_many_attempts" }.count, 8)
        XCTAssertVerificationError(.tooManyAttempts, try harness.check(other, right))
    }
}
