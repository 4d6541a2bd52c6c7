import Foundation
import LineProtocol
import Platform
import StackLauncher
import XCTest

/// The whole stack with `LATCHKEY_SERVICE_TOKEN` set: every internal client carries the token
/// (gateway -> services, verification -> identity, accounts -> verification, reset -> identity,
/// including reset's background client that looks addresses up for its mails), and every
/// client flow still works end to end. Also: what the stack wrote to disk is owner-only.
final class ServiceTokenStackTests: StackTestCase {
    static let serviceToken = "e2e-internal-\(UUID().uuidString)"
    static let password = "correct horse battery"

    override func stackOptions(_ options: inout Stack.Options) {
        options.environment["LATCHKEY_SERVICE_TOKEN"] = Self.serviceToken
    }

    /// An internal call straight to a service, as another service makes it: `meta.token` set.
    private func internalCall(_ service: String, _ method: String, _ params: JSON) throws -> JSON {
        let client = try direct(service)
        try client.send(RPCRequest(method: method, params: params, id: 1, meta: RequestMeta(token: Self.serviceToken)).encoded())
        let line = try XCTUnwrap(try client.readLine())
        let response = try XCTUnwrap(RPCResponse.decode(try JSONParser.parse(line)))
        return try response.outcome.get()
    }

    private func waitForMails(to address: String, count: Int) -> [JSON] {
        let deadline = Date().addingTimeInterval(10)
        var mails: [JSON] = []
        repeat {
            mails = outboxAfterRegistration().filter { $0["to"]?.stringValue == address }
            if mails.count >= count { break }
            usleep(20_000)
        } while Date() < deadline
        return mails
    }

    func testEveryFlowWorksWhenInternalCallsRequireTheServiceToken() throws {
        // The token is really required: an internal method without it is refused.
        assertError(try direct("identity").call("identity.user", ["user_id": "1"]), "unauthenticated")

        let gateway = try gateway()
        let userID = try XCTUnwrap(try gateway.result("identity.register", [
            "username": "tara", "password": .string(Self.password), "email": "tara@example.com", "phone": "+15555550123",
        ])["user_id"]?.stringValue)
        let login = try gateway.result("identity.login", ["username": "tara", "password": .string(Self.password), "device_id": "phone-1"])
        XCTAssertEqual(login["required_factors"], ["sms"])
        let session = try XCTUnwrap(login["session"])

        // SMS step-up: gateway -> verification -> identity (user, elevate, record).
        let requestID = try XCTUnwrap(try gateway.result("verification.start", ["session": session, "channel": "sms"])["request_id"]?.stringValue)
        let smsCode = try code(for: requestID)
        XCTAssertEqual(try gateway.result("verification.check", ["session": session, "request_id": .string(requestID), "code": .string(smsCode)])["status"], "verified")
        XCTAssertEqual(try gateway.result("identity.sessions", ["session": session])["sessions"]?.arrayValue?.count, 1)

        // A transfer: gateway -> accounts -> verification (start, check), its own code.
        _ = try internalCall("accounts", "accounts.deposit", [
            "user_id": .string(userID), "account": "checking", "amount": 10_000, "idempotency_key": "token-deposit",
        ])
        let ticket = try gateway.result("accounts.transfer", [
            "session": session, "from": "checking", "to": "saving", "amount": 2_500, "idempotency_key": "token-transfer",
        ])
        let transferCode = try code(for: try XCTUnwrap(ticket["request_id"]?.stringValue))
        let confirmed = try gateway.result("accounts.confirm", [
            "session": session, "transfer_id": try XCTUnwrap(ticket["transfer_id"]), "code": .string(transferCode),
        ])
        XCTAssertEqual(confirmed["status"], "done")
        XCTAssertEqual(try gateway.result("accounts.balances", ["session": session])["accounts"]?.arrayValue?.map { $0["balance"] }, [7_500, 2_500])

        // Reset: the mail is looked up and sent by reset's background client, after the answer.
        XCTAssertEqual(try gateway.result("reset.request", ["email": "tara@example.com"]), ["ok": true])
        // The first code proved the phone, which mailed a notice of its own: the link's mail follows.
        let mail = try XCTUnwrap(
            waitForMails(to: "tara@example.com", count: 2).first { $0["text"]?.stringValue?.contains("token=") ?? false }, "the reset mail reached the outbox")
        let text = try XCTUnwrap(mail["text"]?.stringValue)
        let start = try XCTUnwrap(text.range(of: "token="))
        let resetToken = String(text[start.upperBound...].prefix { $0 != "\n" })
        XCTAssertEqual(try gateway.result("reset.validate", ["token": .string(resetToken)])["valid"], true)
        XCTAssertEqual(try gateway.result("reset.complete", ["token": .string(resetToken), "password": "a brand new passphrase"]), ["ok": true])
        XCTAssertEqual(waitForMails(to: "tara@example.com", count: 2).count, 2, "the password-changed notice went out too")
        assertError(try gateway.call("identity.sessions", ["session": session]), "unauthenticated")
        XCTAssertNotNil(try gateway.result("identity.login", ["username": "tara", "password": "a brand new passphrase", "device_id": "phone-1"])["session"])

        for member in stack.members {
            XCTAssertFalse(member.log.contains(Self.serviceToken), "the service token reached \(member.replicaID)'s log")
        }
    }

    func testWhatTheStackWroteToDiskIsOwnerOnly() throws {
        let gateway = try gateway()
        _ = try gateway.result("identity.register", [
            "username": "uma", "password": .string(Self.password), "email": "uma@example.com", "phone": "+15555550124",
        ])
        let session = try XCTUnwrap(try gateway.result("identity.login", ["username": "uma", "password": .string(Self.password), "device_id": "d"])["session"])
        _ = try code(for: try XCTUnwrap(try gateway.result("verification.start", ["session": session, "channel": "sms"])["request_id"]?.stringValue))
        XCTAssertEqual(try gateway.result("reset.request", ["email": "uma@example.com"]), ["ok": true])
        XCTAssertFalse(waitForMails(to: "uma@example.com", count: 1).isEmpty)

        XCTAssertEqual(FileModes.permissions(dataDirectory), 0o700, "the data directory")
        var checked: [String] = []
        for service in ["identity", "verification", "accounts", "reset"] {
            for suffix in ["", "-wal", "-shm"] {
                let path = "\(dataDirectory!)/\(service).sqlite\(suffix)"
                guard let mode = FileModes.permissions(path) else { continue }
                XCTAssertEqual(mode, 0o600, path)
                checked.append(path)
            }
        }
        for name in ["outbox.jsonl", "verification.key"] {
            XCTAssertEqual(FileModes.permissions("\(dataDirectory!)/\(name)"), 0o600, name)
        }
        XCTAssertGreaterThanOrEqual(checked.count, 8, "every service wrote its database and WAL: \(checked)")
    }
}

/// Permission bits of a path, or nil when it does not exist.
enum FileModes {
    static func permissions(_ path: String) -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o777
    }
}
