import Foundation
import Secrets
import ServiceKit
import Storage
import XCTest

@testable import Reset

/// The per-address rate-limit records name an address only by a keyed hash: a list of
/// addresses hashed with plain SHA-256 must not find who asked for a reset.
final class ResetSubjectTests: ResetTestCase {
    private func subjects() throws -> [String] {
        try store.database.read { c in try c.query("SELECT subject FROM reset_requests") }.map { try $0.string("subject") }
    }

    func testAddressSubjectsAreNotAPlainHashOfTheAddress() throws {
        requestNow("Alice@Example.com")
        let stored = try subjects()
        XCTAssertEqual(stored.count, 2, "one record for the address, one for the client")
        let plain = Hex.encode(SHA256.hash("alice@example.com"))
        for subject in stored {
            XCTAssertFalse(subject.contains(plain), subject)
            XCTAssertFalse(subject.contains("alice"), subject)
        }
    }

    func testTheSubjectIsKeyedSoAnotherKeyGivesAnotherSubject() throws {
        let first = ResetSubject(key: Array(repeating: 1, count: 32)).address("alice@example.com")
        let second = ResetSubject(key: Array(repeating: 2, count: 32)).address("alice@example.com")
        XCTAssertNotEqual(first, second)
        XCTAssertEqual(first, ResetSubject(key: Array(repeating: 1, count: 32)).address("alice@example.com"))
        XCTAssertEqual(first, "e:" + Hex.encode(HMACSHA256.authenticate(Array("alice@example.com".utf8), key: Array(repeating: 1, count: 32))))
    }

    func testTheMigrationDropsUnkeyedAddressRecordsAndKeepsClientOnes() throws {
        do {
            let old = try openStore("old", migrations: 1)
            try old.database.write { c in
                _ = try c.run("INSERT INTO reset_requests (subject, at_ms) VALUES (?, ?)", [.text("a:" + Hex.encode(SHA256.hash("bob@example.com"))), .integer(1)])
                _ = try c.run("INSERT INTO reset_requests (subject, at_ms) VALUES (?, ?)", [.text("c:198.51.100.7"), .integer(1)])
            }
        }
        let upgraded = try openStore("old")
        let left = try upgraded.database.read { c in try c.query("SELECT subject FROM reset_requests") }.map { try $0.string("subject") }
        XCTAssertEqual(left, ["c:198.51.100.7"])
    }

    func testTheKeyFileIsMadeOnceWithMode0600AndReadBack() throws {
        let path = directory + "/reset.key"
        let first = try ServerKeyFile.load(path: path, configured: nil, option: "--reset-key")
        let second = try ServerKeyFile.load(path: path, configured: nil, option: "--reset-key")
        XCTAssertEqual(first, second)
        XCTAssertEqual(first.count, 32)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        XCTAssertThrowsError(try ServerKeyFile.load(path: path, configured: "too short", option: "--reset-key"))
    }
}
