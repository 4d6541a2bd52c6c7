import Foundation
import LineProtocol
import Platform
import RPC
import XCTest

/// `reset.request` answers `ok` before the lookup and the mail; the promise is kept through a
/// kill -9: the request waits in reset's own database and its mail goes out after the restart,
/// once.
final class ResetMailQueueEndToEndTests: ResetProcessTestCase {
    func testAKillNineAfterTheAnswerNeitherLosesNorDoublesTheMail() throws {
        identity.findDelayMicroseconds = 5_000_000  // the lookup is still under way when reset dies
        try startReset()
        XCTAssertEqual(try LineClient(endpoint).result("reset.request", ["email": "demo@example.com"]), ["ok": true])
        XCTAssertTrue(outbox().isEmpty, "answered before the mail")
        kill(reset.processIdentifier, SIGKILL)
        reset.waitUntilExit()

        identity.findDelayMicroseconds = 0
        try startReset()
        let mails = waitForMail(count: 1)
        let token = try XCTUnwrap(mails.first?["text"]?.stringValue.flatMap(Self.token(in:)))
        let client = try LineClient(endpoint)
        XCTAssertEqual(try client.result("reset.validate", ["token": .string(token)])["valid"], true)
        // The queue is empty: another restart sends nothing more.
        kill(reset.processIdentifier, SIGTERM)
        reset.waitUntilExit()
        XCTAssertEqual(reset.terminationStatus, 0)
        try startReset()
        XCTAssertEqual(try LineClient(endpoint).result("reset.ping"), ["pong": true])
        XCTAssertEqual(outbox().count, 1, "one mail for one request")
    }
}
