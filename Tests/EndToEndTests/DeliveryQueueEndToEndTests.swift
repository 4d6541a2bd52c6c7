import Foundation
import LineProtocol
import RPC
import StackLauncher
import XCTest

/// The verification executable with `--delivery webhook` pointed at a provider that holds every
/// answer: a start is answered once its message is queued, never after the provider; the message
/// goes out later by the delivery workers, and a kill -9 mid-send resends it after the restart
/// under the same idempotency key (`X-Latchkey-Delivery`), so the provider sees one message.
final class DeliveryQueueEndToEndTests: VerificationStackTestCase {
    var provider: HoldingWebhookServer!

    override func setUpWithError() throws {
        provider = try HoldingWebhookServer(holdMilliseconds: 30_000)
        try super.setUpWithError()
    }

    override func tearDown() {
        provider?.release()
        super.tearDown()
        provider?.stop()
    }

    override func stackOptions(_ options: inout Stack.Options) {
        super.stackOptions(&options)
        options.serviceEnvironment["verification", default: [:]].merge([
            "LATCHKEY_DELIVERY": "webhook", "LATCHKEY_WEBHOOK_URL": "http://127.0.0.1:\(provider.port)/sms",
            "LATCHKEY_WEBHOOK_SECRET": "0123456789abcdef0123", "LATCHKEY_HTTP_TIMEOUT_MS": "60000",
            // Fewer request workers than held sends: a send on a request worker would stop the service.
            "LATCHKEY_WORKERS": "4", "LATCHKEY_DELIVERY_WORKERS": "2",
        ]) { _, new in new }
    }

    /// A client that gives up long before the provider answers: an answer that waited for the
    /// provider shows up as a read timeout here.
    private func impatientClient() throws -> LineClient {
        try LineClient(stack.endpoint("verification"), timeoutMilliseconds: 5_000)
    }

    private func sentEvents(_ client: LineClient, _ id: String) throws -> Int {
        let status = try client.result("verification.status", ["request_id": .string(id)])
        return status["events"]?.arrayValue?.filter { $0["kind"] == "sent" }.count ?? -1
    }

    private func waitForSent(_ client: LineClient, _ id: String) throws -> Bool {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if try sentEvents(client, id) > 0 { return true }
            usleep(20_000)  // polling a remote state; the condition is what ends the wait
        }
        return false
    }

    func testStartsAreAnsweredWhileTheProviderHoldsEveryMessage() throws {
        let client = try impatientClient()
        var ids: [String] = []
        for index in 0..<8 {
            ids.append(try start(client, ["number": .string("+1555555\(String(format: "%04d", 300 + index))"), "purpose": "transaction"]))
        }
        XCTAssertTrue(provider.waitForRequests(1), "the delivery workers took messages to the provider")
        // Ordering, not a stopwatch: every start was answered while the provider had answered nothing.
        XCTAssertEqual(provider.answers.count, 0)
        XCTAssertEqual(try client.result("verification.ping"), ["pong": true], "other methods keep working")
        for id in ids {
            let status = try client.result("verification.status", ["request_id": .string(id)])
            XCTAssertEqual(status["status"], "pending")
            XCTAssertEqual(try sentEvents(client, id), 0, "not sent before the provider said so")
        }
        XCTAssertLessThanOrEqual(provider.requests.count, 2, "at most --delivery-workers sends at once")

        provider.release()
        for id in ids { XCTAssertTrue(try waitForSent(client, id), "\(id) delivered later") }
        let delivered = provider.answers
        XCTAssertEqual(delivered.count, 8, "each message exactly once")
        XCTAssertEqual(Set(delivered.map(\.requestID)), Set(ids))
        XCTAssertEqual(Set(delivered.map(\.deliveryID)).count, 8)
        let first = try XCTUnwrap(delivered.first { $0.requestID == ids[0] })
        let code = try XCTUnwrap(Self.code(in: first.text, spoken: false))
        XCTAssertEqual(try client.result("verification.check", ["request_id": .string(ids[0]), "code": .string(code)]), ["status": "verified"])
    }

    func testKillNineMidSendThenRestartSendsTheSameMessageOnce() throws {
        let client = try impatientClient()
        let id = try start(client, ["number": "+15555550390", "purpose": "transaction"])
        XCTAssertTrue(provider.waitForRequests(1), "the send is in flight")
        stack.kill("verification")
        XCTAssertTrue(provider.waitForCut(1), "the provider saw the sender die mid-send")

        try stack.restart("verification")
        XCTAssertTrue(provider.waitForRequests(2), "the queued message is sent again after the restart")
        provider.release()
        let after = try impatientClient()
        XCTAssertTrue(try waitForSent(after, id))
        let attempts = provider.requests.filter { $0.requestID == id }
        XCTAssertEqual(attempts.count, 2)
        XCTAssertEqual(Set(attempts.map(\.deliveryID)).count, 1, "one idempotency key across the restart")
        XCTAssertEqual(Set(attempts.map(\.text)).count, 1, "the same code, so dropping the duplicate is safe")
        XCTAssertEqual(provider.answers.count, 1, "answered once")
        XCTAssertEqual(try sentEvents(after, id), 1)
        let code = try XCTUnwrap(Self.code(in: attempts[0].text, spoken: false))
        XCTAssertEqual(try after.result("verification.check", ["request_id": .string(id), "code": .string(code)]), ["status": "verified"])
        // Nothing left to resend: a later restart sends nothing more.
        XCTAssertEqual(stack.terminate("verification"), 0)
        try stack.restart("verification")
        XCTAssertEqual(try impatientClient().result("verification.ping"), ["pong": true])
        XCTAssertFalse(provider.waitForRequests(3, seconds: 1), "no third send")
    }
}
