import Foundation
import LatchkeyClient
import XCTest

/// Recovery codes through the client: generated after a step-up, each pays an owed factor once
/// (also under a burst), they count down, and a new set voids the old one.
final class RecoveryCodesEndToEndTests: ClientStackTestCase {
    /// A password sign-in of the demo user on a device it never used: it owes `sms`.
    private func strangerDevice(_ deviceID: String) async throws -> LatchkeyClient {
        let client = try client()
        let signedIn = try await client.signIn(username: "demo", password: demoPassword, deviceID: deviceID)
        XCTAssertEqual(signedIn.requiredFactors, [.sms])
        return client
    }

    func testARecoveryCodePaysTheOwedFactorOnceAndANewSetVoidsTheOld() async throws {
        let owner = try client()
        try await signInWithCode(owner)
        let codes = try await owner.generateRecoveryCodes()
        XCTAssertEqual(codes.count, 10)
        XCTAssertEqual(Set(codes).count, 10)
        XCTAssertTrue(codes.allSatisfy { $0.range(of: "^[0-9a-z]{5}-[0-9a-z]{5}$", options: .regularExpression) != nil }, "\(codes)")
        let counted = try await owner.preferences()
        XCTAssertEqual(counted.recoveryCodesLeft, 10)

        // The phone is lost: a borrowed one signs in and pays with a code, typed any way.
        let borrowed = try await strangerDevice("borrowed-phone")
        let passed = try await borrowed.verifyRecoveryCode(codes[0].uppercased().replacingOccurrences(of: "-", with: " "))
        XCTAssertEqual(passed.aal, 2)
        XCTAssertEqual(passed.remaining, 9)
        let balances = try await borrowed.balances()
        XCTAssertEqual(balances.count, 2)

        let again = try await strangerDevice("another-phone")
        await XCTAssertThrowsLatchkeyError(.invalidCode(attemptsLeft: 2)) { try await again.verifyRecoveryCode(codes[0]) }

        let fresh = try await owner.generateRecoveryCodes()
        XCTAssertTrue(Set(fresh).isDisjoint(with: codes))
        await XCTAssertThrowsLatchkeyError(.invalidCode(attemptsLeft: 1)) { try await again.verifyRecoveryCode(codes[1]) }
        let left = try await owner.preferences()
        XCTAssertEqual(left.recoveryCodesLeft, 10)
    }

    func testOneCodeSentFromFiveSessionsAtOncePaysForOne() async throws {
        let owner = try client()
        try await signInWithCode(owner)
        let code = try await owner.generateRecoveryCodes()[0]
        var sessions: [LatchkeyClient] = []
        for index in 0..<5 { sessions.append(try await strangerDevice("phone-\(index)")) }
        let outcomes = await withTaskGroup(of: LatchkeyError?.self) { group in
            for session in sessions {
                group.addTask { await latchkeyErrorOrNil { try await session.verifyRecoveryCode(code) } }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(outcomes.filter { $0 == nil }.count, 1, "\(outcomes)")
        for case let error? in outcomes {
            switch error {
            case .invalidCode, .locked: break
            default: XCTFail("unexpected \(error)")
            }
        }
        let left = try await owner.preferences()
        XCTAssertEqual(left.recoveryCodesLeft, 9)
    }

    func testGeneratingCodesNeedsTheSecondFactorFirst() async throws {
        let stranger = try await strangerDevice("iphone-1")
        await XCTAssertThrowsLatchkeyError(.stepUpRequired(.factorsOwed([.sms]))) { try await stranger.generateRecoveryCodes() }
        await XCTAssertThrowsLatchkeyError(.invalidParams(field: "code", rule: nil)) { try await stranger.verifyRecoveryCode("not a code") }
    }
}

/// nil when `body` succeeds, else its `LatchkeyError` (any other error is a `network` one, so it fails the caller's checks).
func latchkeyErrorOrNil<T>(_ body: () async throws -> T) async -> LatchkeyError? {
    do {
        _ = try await body()
        return nil
    } catch let error as LatchkeyError {
        return error
    } catch {
        return .network("\(error)")
    }
}
