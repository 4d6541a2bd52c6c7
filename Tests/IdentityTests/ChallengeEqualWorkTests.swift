import Foundation
import Secrets
import XCTest

@testable import Identity

/// `identity.challenge {username}` does the same work for unknown users as for known ones (no
/// enumeration by timing): the same reads and the same write. Work is counted in rows written,
/// never timed (`latchkey bench` is for time).
final class ChallengeEqualWorkTests: IdentityTestCase {
    private func challengeRows() throws -> Int64 {
        try service.store.database.read { c in try c.queryOne("SELECT COUNT(*) AS n FROM challenges")?.int("n") ?? -1 }
    }

    func testKnownAndUnknownUsernamesWriteTheSameRows() throws {
        try registerUser()
        var written: [String: Int64] = [:]
        for username in ["alice", "nobody", "x"] {  // known, unknown, and a name that cannot exist
            let before = try challengeRows()
            _ = try service.challenge(deviceID: "iphone-1", token: nil, username: username, caller: caller)
            written[username] = try challengeRows() - before
        }
        XCTAssertEqual(written, ["alice": 1, "nobody": 1, "x": 1])
    }

    func testAnUnknownUsersChallengeCannotBeUsedByAnyone() throws {
        try registerUser()
        let phone = FakeiPhone(deviceID: "iphone-1")
        let session = try elevatedLogin(device: phone.deviceID)
        _ = try service.enrollKey(token: session.session, deviceID: phone.deviceID, publicKey: phone.publicKeyBase64, protection: "biometry", caller: caller)
        let decoy = try service.challenge(deviceID: phone.deviceID, token: nil, username: "nobody", caller: caller).challenge
        let refused = assertReason(.invalidToken) {
            try service.keyLogin(username: "alice", deviceID: phone.deviceID, challenge: decoy, signature: phone.sign(decoy), caller: caller)
        }
        XCTAssertEqual(refused?.data?["detail"], "foreign", "the same answer as another user's challenge")
    }
}
