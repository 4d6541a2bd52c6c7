import Foundation
import Storage
import XCTest

@testable import Identity

/// A phone on a profile is only a claim until its owner proves it with a code sent to it.
final class PhoneProofTests: IdentityTestCase {
    func testARegisteredPhoneIsUnprovenUntilProvedAndOnlyItsOwnNumberCanBeProved() throws {
        let alice = try registerUser("alice", phone: "5555550100")
        let mallory = try registerUser("mallory", phone: "+1 (555) 555-0100")
        XCTAssertFalse(try service.isPhoneProven(userID: alice))
        XCTAssertFalse(try service.isPhoneProven(userID: mallory))

        try service.provePhone(userID: alice, phone: "+15555550100", caller: caller)
        XCTAssertTrue(try service.isPhoneProven(userID: alice))
        XCTAssertFalse(try service.isPhoneProven(userID: mallory), "one user's proof is not another's")
        XCTAssertThrowsError(try service.provePhone(userID: alice, phone: "+15555550199", caller: caller)) { error in
            XCTAssertEqual((error as? IdentityError)?.rpcError.reason, .conflict)
        }
        XCTAssertThrowsError(try service.provePhone(userID: "usr_nobody", phone: "+15555550100", caller: caller)) { error in
            XCTAssertEqual((error as? IdentityError)?.rpcError.reason, .notFound)
        }
        XCTAssertEqual(try service.store.events(userID: alice, limit: 1, before: nil).first?.event, "phone.proven")
    }

    func testAProofNamesItsNumberSoAChangedPhoneIsUnprovenAgain() throws {
        let alice = try registerUser("alice", phone: "5555550100")
        try service.provePhone(userID: alice, phone: "+15555550100", caller: caller)
        try changePhone(of: alice, to: "+15555550142")
        XCTAssertFalse(try service.isPhoneProven(userID: alice))
        try service.provePhone(userID: alice, phone: "+15555550142", caller: caller)
        XCTAssertTrue(try service.isPhoneProven(userID: alice))
    }

    func testTheMigrationCountsUsersWhoAlreadyPassedACodeOnATrustedDeviceAsProven() throws {
        let old = try openStore("old", migrations: 1)
        try old.database.write { c in
            for user in ["u_trusted", "u_new"] {
                _ = try c.run(
                    "INSERT INTO users (user_id, username, email, phone, password_hash, created_at) VALUES (?, ?, ?, '+15555550100', 'x', 1)",
                    [.text(user), .text(user), .text("\(user)@example.com")])
                _ = try c.run("INSERT INTO devices (user_id, device_id, first_seen_at, trusted_at) VALUES (?, 'd', 1, ?)",
                              [.text(user), user == "u_trusted" ? .integer(5) : .null])
            }
        }
        let store = try openStore("old")
        XCTAssertTrue(try store.isPhoneProven(userID: "u_trusted"))
        XCTAssertFalse(try store.isPhoneProven(userID: "u_new"))
    }
}
