import Foundation
import LineProtocol
import Secrets
import XCTest

/// The seed's reset flow through the gateway with every real executable (`Stack`): request ->
/// mail in the outbox with the deep link -> validate -> complete -> the old password and every
/// old session fail, the new password works -> the same token fails.
final class ResetStackEndToEndTests: StackTestCase {
    static let oldPassword = "correct horse battery"
    static let newPassword = "staple gun rhubarb kite"

    private func mails(to address: String) -> [JSON] {
        outboxAfterRegistration().filter { $0["to"]?.stringValue == address }
    }

    private func waitForMails(to address: String, count: Int) -> [JSON] {
        let deadline = Date().addingTimeInterval(10)
        while mails(to: address).count < count && Date() < deadline { usleep(20_000) }
        return mails(to: address)
    }

    func testSeedResetFlowThroughTheGateway() throws {
        let gateway = try gateway()
        _ = try gateway.result("identity.register", [
            "username": "dave", "password": .string(Self.oldPassword), "email": "dave@example.com", "phone": "+15555550123",
        ])
        let sessions = try ["device-a", "device-b"].map { device in
            try XCTUnwrap(try gateway.result("identity.login", ["username": "dave", "password": .string(Self.oldPassword), "device_id": .string(device)])["session"])
        }

        // The same answer for a known and an unknown address.
        let known = try gateway.call("reset.request", ["email": "Dave@Example.com"])
        let unknown = try gateway.call("reset.request", ["email": "nobody@example.com"])
        XCTAssertEqual(try known.outcome.get(), ["ok": true])
        XCTAssertEqual(try unknown.outcome.get(), ["ok": true])

        let mail = try XCTUnwrap(waitForMails(to: "dave@example.com", count: 1).first)
        // Within 60 s a second request answers the same and sends nothing.
        XCTAssertEqual(try gateway.result("reset.request", ["email": "dave@example.com"]), ["ok": true])
        XCTAssertTrue(mails(to: "nobody@example.com").isEmpty)
        XCTAssertEqual(mail["channel"], "email")
        let text = try XCTUnwrap(mail["text"]?.stringValue)
        let range = try XCTUnwrap(text.range(of: "latchkey://reset-password?token="))
        let token = String(text[range.upperBound...].prefix { $0 != "\n" })
        XCTAssertTrue(OpaqueToken.isWellFormed(token, prefix: "lkr_"))

        XCTAssertEqual(try gateway.result("reset.validate", ["token": .string(token)])["valid"], true)
        assertError(try gateway.call("reset.complete", ["token": .string(token), "password": "short"]), "weak_password")
        XCTAssertEqual(try gateway.result("reset.complete", ["token": .string(token), "password": .string(Self.newPassword)]), ["ok": true])

        // The old password and every old session fail; the new password works.
        assertError(try gateway.call("identity.login", ["username": "dave", "password": .string(Self.oldPassword), "device_id": "device-a"]), "invalid_credentials")
        for session in sessions {
            assertError(try gateway.call("identity.sessions", ["session": session]), "unauthenticated")
        }
        let fresh = try gateway.result("identity.login", ["username": "dave", "password": .string(Self.newPassword), "device_id": "device-a"])
        XCTAssertNotNil(fresh["session"]?.stringValue)

        // The same token fails, for validate and complete alike.
        assertError(try gateway.call("reset.validate", ["token": .string(token)]), "invalid_token")
        assertError(try gateway.call("reset.complete", ["token": .string(token), "password": "another long password"]), "invalid_token")

        let notices = waitForMails(to: "dave@example.com", count: 2)
        XCTAssertEqual(notices.map { $0["subject"]?.stringValue ?? "" }, ["Reset your Latchkey password", "Your Latchkey password was changed"])
        XCTAssertEqual(try direct("reset").result("reset.metrics")["counters"]?["reset.refused"], 1)
        XCTAssertFalse(stack.member("reset").log.contains(String(token.dropFirst(4))), "the token reached reset's log")
        XCTAssertFalse(stack.member("gateway").log.contains(String(token.dropFirst(4))), "the token reached the gateway's log")
    }
}
