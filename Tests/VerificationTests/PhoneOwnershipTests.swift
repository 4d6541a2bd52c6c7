import Foundation
import TestSupport
import XCTest

@testable import Verification

/// A number is a factor only for the user who proved it; strangers who claim it get proof codes
/// under their own small budget, and never block, drain or learn about the owner's codes.
class PhoneOwnershipTests: VerificationTestCase {
    static let number = "+15555550100"
    var number: String { Self.number }

    private func ownerStart(_ harness: Harness, purpose: Purpose = .login) throws -> String {
        try harness.start(number: Self.number, purpose: purpose) {
            $0.userID = "u_owner"
            $0.provenNumber = "+1 555 555 0100"
        }
    }

    private static func strangerStart(_ harness: Harness, _ user: String) throws -> String {
        try harness.start(number: Self.number, purpose: .phoneProof) { $0.userID = user }
    }

    func testABurstOfStrangersNeitherBlocksNorDrainsTheOwner() throws {
        let harness = try makeHarness()
        let outcomes = SharedList<String>()
        DispatchQueue.concurrentPerform(iterations: 12) { index in
            do {
                outcomes.append("started:" + (try Self.strangerStart(harness, "u_stranger\(index)")))
            } catch let error as VerificationError {
                outcomes.append("refused:" + (error.rpcError.reasonText ?? "?"))
            } catch {
                outcomes.append("error:\(error)")
            }
        }
        let proofSends = harness.provider.sent.filter { $0.to == number }.count
        XCTAssertEqual(proofSends, harness.service.settings.perProofNumber[0].count, "the proof budget caps the flood: \(outcomes.all)")
        XCTAssertTrue(outcomes.all.allSatisfy { $0.hasPrefix("started:") || $0 == "refused:rate_limited" }, "\(outcomes.all)")

        // The owner's own budget is untouched: three codes in ten minutes, as for anyone.
        for _ in 0..<3 {
            let id = try ownerStart(harness)
            _ = try harness.service.cancel(requestID: id, owner: nil, logger: harness.logger)
        }
        XCTAssertVerificationError(.rateLimited(retryAfterSeconds: 600, scope: "number"), try ownerStart(harness))
    }

    func testTheOneLiveCodeRuleIsPerUserAndNumber() throws {
        let harness = try makeHarness()
        let stranger = try Self.strangerStart(harness, "u_stranger")
        let owner = try ownerStart(harness, purpose: .transaction)
        XCTAssertNotEqual(stranger, owner)
        XCTAssertVerificationError(
            .concurrentVerification(requestID: owner), try ownerStart(harness, purpose: .transaction), "the owner sees only her own request")
        XCTAssertVerificationError(.concurrentVerification(requestID: stranger), try Self.strangerStart(harness, "u_stranger"))
        // A user-less internal start for the number is its own caller's business.
        XCTAssertNoThrow(try harness.start(number: number))
    }

    func testAnUnprovenNumberGetsOnlyTheProofCode() throws {
        let harness = try makeHarness()
        for purpose in [Purpose.login, .transaction] {
            XCTAssertVerificationError(
                .invalidParams("the user has not proved this phone number yet", field: "user_id", rule: "phone_not_proven"),
                try harness.start(number: number, purpose: purpose) { $0.userID = "u_stranger" })
            // Proving another number does not make this one a factor.
            XCTAssertVerificationError(
                .invalidParams("the user has not proved this phone number yet", field: "user_id", rule: "phone_not_proven"),
                try harness.start(number: number, purpose: purpose) {
                    $0.userID = "u_stranger"
                    $0.provenNumber = "+15555550199"
                })
        }
        XCTAssertTrue(harness.provider.sent.isEmpty)
        XCTAssertVerificationError(
            .invalidParams("a phone proof needs user_id and a phone channel", field: "purpose"),
            try harness.start(number: number, purpose: .phoneProof))
        let proof = try Self.strangerStart(harness, "u_stranger")
        let result = try harness.check(proof, harness.code(proof))
        XCTAssertEqual(result.purpose, .phoneProof)
        XCTAssertEqual(result.number, number)
    }
}
