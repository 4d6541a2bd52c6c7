import Foundation
import LineProtocol
import RPC
import StackLauncher
import XCTest

/// The verification service as a real process: codes go to the outbox, the test reads them
/// back like the user reading an SMS. `LATCHKEY_VERIFICATION_MIN_NEXT_WAIT_S=1` (test-only)
/// lets the voice fallback fire after one second instead of a minute.
class VerificationStackTestCase: StackTestCase {
    override func stackOptions(_ options: inout Stack.Options) {
        options.serviceEnvironment["verification"] = ["LATCHKEY_VERIFICATION_MIN_NEXT_WAIT_S": "1", "LATCHKEY_VERIFICATION_TICK_MS": "100"]
    }

    func start(_ client: LineClient, _ params: [String: JSON]) throws -> String {
        try XCTUnwrap(try client.result("verification.start", .object(params))["request_id"]?.stringValue)
    }
}


final class VerificationEndToEndTests: VerificationStackTestCase {
    func testWrongCodeThenRightCodeAndNoSecondUse() throws {
        let client = try direct("verification")
        let id = try start(client, ["number": "+15555550100", "purpose": "transaction", "brand": "DemoBank"])
        XCTAssertTrue(id.hasPrefix("vr_verification_"), id)
        let code = try code(for: id)
        XCTAssertEqual(code.count, 6)
        let message = try XCTUnwrap(outbox().last)
        XCTAssertEqual(message["to"], "+15555550100")
        XCTAssertTrue(message["text"]?.stringValue?.hasPrefix("DemoBank: your code is") ?? false)
        let wrongCode = String(code.reversed()) == code ? "000000" == code ? "111111" : "000000" : String(code.reversed())
        let refused = assertError(try client.call("verification.check", ["request_id": .string(id), "code": .string(wrongCode)]), "invalid_code")
        XCTAssertEqual(refused?.data?["attempts_left"], 2)
        XCTAssertEqual(try client.result("verification.check", ["request_id": .string(id), "code": .string(code)]), ["status": "verified"])
        assertError(try client.call("verification.check", ["request_id": .string(id), "code": .string(code)]), "conflict")
        let status = try client.result("verification.status", ["request_id": .string(id)])
        XCTAssertEqual(status["status"], "verified")
        XCTAssertFalse(status.text.contains(code), "status never shows the code")
        XCTAssertFalse(stack.member("verification").log.contains(code), "the code never reaches the log")
        let counters = try client.result("verification.metrics")["counters"]
        XCTAssertEqual(counters?["delivery.sms.sent"], 1)
        XCTAssertEqual(counters?["delivery.handed_off"], 1, "the process hands a start's message straight to a delivery worker")
        XCTAssertEqual(counters?["verification.verified"], 1)
        XCTAssertEqual(counters?["verification.invalid_code"], 1)
        let keyFile = (dataDirectory as NSString).appendingPathComponent("verification.key")
        let attributes = try FileManager.default.attributesOfItem(atPath: keyFile)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
    }

    func testTooManyCodesFailsTheRequestAndCancelEndsAnother() throws {
        let client = try direct("verification")
        let id = try start(client, ["number": "+15555550101", "purpose": "login"])
        let firstCode = try code(for: id)
        let bad = firstCode == "000000" ? "111111" : "000000"
        assertError(try client.call("verification.check", ["request_id": .string(id), "code": .string(bad)]), "invalid_code")
        assertError(try client.call("verification.check", ["request_id": .string(id), "code": .string(bad)]), "invalid_code")
        assertError(try client.call("verification.check", ["request_id": .string(id), "code": .string(bad)]), "too_many_attempts")
        assertError(try client.call("verification.check", ["request_id": .string(id), "code": .string(firstCode)]), "too_many_attempts")

        let other = try start(client, ["number": "+15555550102", "purpose": "login"])
        let concurrent = assertError(try client.call("verification.start", ["number": "+15555550102", "purpose": "login"]), "concurrent_verification")
        XCTAssertEqual(concurrent?.data?["request_id"]?.stringValue, other)
        XCTAssertEqual(try client.result("verification.cancel", ["request_id": .string(other)]), ["status": "cancelled"])
        assertError(try client.call("verification.check", ["request_id": .string(other), "code": .string(try code(for: other))]), "conflict")
        assertError(try client.call("verification.cancel", ["request_id": .string(other)]), "conflict")
        assertError(try client.call("verification.check", ["request_id": "vr_verification_missing", "code": "123456"]), "not_found")
    }

    func testVoiceFallbackFiresAfterTheWait() throws {
        let client = try direct("verification")
        let id = try start(client, ["number": "+15555550103", "purpose": "login", "workflow": "sms_voice", "next_event_wait_s": 1, "locale": "fr"])
        let smsCode = try code(for: id)
        XCTAssertTrue(outbox().last?["text"]?.stringValue?.contains("votre code est") ?? false)
        let voiceCode = try code(for: id, channel: "voice", timeoutSeconds: 10)
        let status = try client.result("verification.status", ["request_id": .string(id)])
        XCTAssertEqual(status["channel"], "voice")
        XCTAssertEqual(status["events"]?.arrayValue?.compactMap { $0["kind"]?.stringValue }, ["started", "sent", "sent"])
        if smsCode != voiceCode {
            assertError(try client.call("verification.check", ["request_id": .string(id), "code": .string(smsCode)]), "invalid_code")
        }
        XCTAssertEqual(try client.result("verification.check", ["request_id": .string(id), "code": .string(voiceCode)]), ["status": "verified"])
    }

    func testTransferBoundCodeFailsWithAChangedPayload() throws {
        let client = try direct("verification")
        let payload: JSON = ["amount": 5000, "currency": "USD", "from": "checking", "to": "saving", "reference": "tr_1"]
        let id = try start(client, ["number": "+15555550104", "purpose": "transaction", "payload": payload])
        let code = try code(for: id)
        XCTAssertEqual(outbox().last?["text"]?.stringValue, "Latchkey: code \(code) to move 50.00 USD from checking to saving (tr_1). It expires in 5 min. Never share it.")
        var changed = payload.objectValue!
        changed["amount"] = 500_000
        assertError(try client.call("verification.check", ["request_id": .string(id), "code": .string(code), "payload": .object(changed)]), "invalid_code")
        assertError(try client.call("verification.check", ["request_id": .string(id), "code": .string(code)]), "invalid_code")
        XCTAssertEqual(
            try client.result("verification.check", ["request_id": .string(id), "code": .string(code), "payload": payload]), ["status": "verified"])
    }

    func testLiveCodeSurvivesARestart() throws {
        let id = try start(try direct("verification"), ["number": "+15555550106", "purpose": "login", "workflow": "sms_voice", "next_event_wait_s": 60])
        let code = try code(for: id)
        XCTAssertEqual(stack.terminate("verification"), 0, "SIGTERM drains and exits 0")
        try stack.restart("verification")
        let client = try direct("verification")
        XCTAssertEqual(try client.result("verification.status", ["request_id": .string(id)])["status"], "pending")
        XCTAssertEqual(try client.result("verification.check", ["request_id": .string(id), "code": .string(code)]), ["status": "verified"])
    }

    func testSendLimitPerNumberAnswersRetryAfter() throws {
        let client = try direct("verification")
        for _ in 0..<3 {
            let id = try start(client, ["number": "+15555550105", "purpose": "transaction"])
            _ = try client.result("verification.cancel", ["request_id": .string(id)])
        }
        let limited = assertError(try client.call("verification.start", ["number": "+15555550105", "purpose": "transaction"]), "rate_limited")
        XCTAssertGreaterThan(limited?.data?["retry_after"]?.intValue ?? 0, 500)
    }
}

/// Two replicas with their own `--replica-id` and database: each issues ids naming itself,
/// and only the owner knows its requests.
final class VerificationReplicaEndToEndTests: VerificationStackTestCase {
    override func stackOptions(_ options: inout Stack.Options) {
        super.stackOptions(&options)
        options.verificationReplicas = 2
    }

    func testEachReplicaOwnsTheIdsItIssues() throws {
        let first = try direct("verification", replica: 0)
        let second = try direct("verification", replica: 1)
        let firstID = try start(first, ["number": "+15555550110", "purpose": "transaction"])
        let secondID = try start(second, ["number": "+15555550111", "purpose": "transaction"])
        XCTAssertTrue(firstID.hasPrefix("vr_verification_"), firstID)
        XCTAssertTrue(secondID.hasPrefix("vr_verification-2_"), secondID)
        let owner = secondID.dropFirst(3).prefix { $0 != "_" }
        XCTAssertEqual(owner, "verification-2", "the owner is everything between vr_ and the next _")
        let secondCode = try code(for: secondID)
        assertError(try first.call("verification.check", ["request_id": .string(secondID), "code": .string(secondCode)]), "not_found")
        XCTAssertEqual(try second.result("verification.check", ["request_id": .string(secondID), "code": .string(secondCode)]), ["status": "verified"])
        XCTAssertEqual(try first.result("verification.check", ["request_id": .string(firstID), "code": .string(try code(for: firstID))]), ["status": "verified"])
    }
}

/// A provider that cannot deliver: the start is answered once the message is queued, and the
/// request's status says what became of it; nothing pretends the code went out.
final class VerificationDeliveryFailureEndToEndTests: VerificationStackTestCase {
    override func stackOptions(_ options: inout Stack.Options) {
        super.stackOptions(&options)
        options.serviceEnvironment["verification", default: [:]].merge([
            "LATCHKEY_DELIVERY": "webhook", "LATCHKEY_WEBHOOK_URL": "http://127.0.0.1:1/hook",
            "LATCHKEY_WEBHOOK_SECRET": "0123456789abcdef0123", "LATCHKEY_DELIVERY_ATTEMPTS": "2", "LATCHKEY_DELIVERY_BACKOFF_MS": "10",
        ]) { _, new in new }
    }

    func testFailedDeliveryIsVisibleInStatus() throws {
        let client = try direct("verification")
        let id = try start(client, ["number": "+15555550120", "purpose": "login"])
        var status: JSON = .null
        let deadline = Date().addingTimeInterval(10)
        repeat {
            status = try client.result("verification.status", ["request_id": .string(id)])
            if status["status"] == "failed" { break }
            usleep(20_000)  // polling the service's state; the condition ends the wait
        } while Date() < deadline
        XCTAssertEqual(status["status"], "failed")
        let kinds = status["events"]?.arrayValue?.compactMap { $0["kind"]?.stringValue }
        XCTAssertEqual(kinds, ["started", "delivery_retry", "delivery_failed"], "--delivery-attempts 2: one retry, then given up")
        let failure = try XCTUnwrap(status["events"]?.arrayValue?.last)
        XCTAssertTrue(failure["detail"]?.stringValue?.hasPrefix("webhook: cannot connect") ?? false, failure.text)
        XCTAssertTrue(outbox().isEmpty)
    }
}
