import Delivery
import HTTP
import LineProtocol
import Secrets
import XCTest

final class WebhookProviderTests: XCTestCase {
    var server: HTTPTestServer!
    let secret = Array("webhook-secret-0123456789".utf8)

    override func setUpWithError() throws { server = try HTTPTestServer() }
    override func tearDown() { server.stop() }

    func provider(attempts: Int = 3) throws -> WebhookProvider {
        WebhookProvider(
            url: try HTTPURL(server.url + "/latchkey/messages"), secret: secret, client: try HTTPClient(timeoutMilliseconds: 2000),
            retry: RetryPolicy(maxAttempts: attempts, initialBackoffMilliseconds: 10), clock: { 1_800_000_000 })
    }

    func testPostsSignedJSON() throws {
        let message = OutgoingMessage(channel: .voice, to: "+15555550100", text: "This is Latchkey. Your code is: 1, 2, 3.", requestID: "vr_a_b")
        try provider().deliver(message)
        let received = try XCTUnwrap(server.received.first)
        XCTAssertEqual(received.method, "POST")
        XCTAssertEqual(received.path, "/latchkey/messages")
        XCTAssertEqual(received.header("Content-Type"), "application/json")
        XCTAssertEqual(received.header("X-Latchkey-Timestamp"), "1800000000")
        let expected = "sha256=" + Hex.encode(HMACSHA256.authenticate(Array("1800000000.".utf8) + received.body, key: secret))
        XCTAssertEqual(received.header("X-Latchkey-Signature"), expected)
        let body = try JSONParser.parse(received.body)
        XCTAssertEqual(body["channel"], "voice")
        XCTAssertEqual(body["to"], "+15555550100")
        XCTAssertEqual(body["text"]?.stringValue, message.text)
        XCTAssertEqual(body["request_id"], "vr_a_b")
        XCTAssertEqual(body["at"], 1_800_000_000)
        XCTAssertEqual(body["id"]?.stringValue, received.header("X-Latchkey-Delivery"))
    }

    func testRetriesTransientFailuresWithTheSameDeliveryId() throws {
        server.script([.init(status: 503, body: ""), .init(status: 429, body: ""), .init(status: 204, body: "")])
        try provider().deliver(OutgoingMessage(channel: .sms, to: "+15555550100", text: "code 123456"))
        let received = server.received
        XCTAssertEqual(received.count, 3)
        XCTAssertEqual(Set(received.compactMap { $0.header("X-Latchkey-Delivery") }).count, 1)
    }

    func testPermanentFailureStopsAtOnceAndGivingUpIsAnError() throws {
        server.script([.init(status: 400, body: "")])
        XCTAssertThrowsError(try provider().deliver(OutgoingMessage(channel: .sms, to: "+1", text: "x"))) { error in
            let failure = error as? DeliveryError
            XCTAssertEqual(failure?.permanent, true)
            XCTAssertEqual(failure?.detail, "HTTP 400 (after 1 attempt)")
        }
        XCTAssertEqual(server.received.count, 1)
        server.script([.init(status: 500, body: ""), .init(status: 500, body: "")])
        XCTAssertThrowsError(try provider(attempts: 2).deliver(OutgoingMessage(channel: .sms, to: "+1", text: "x"))) { error in
            XCTAssertEqual((error as? DeliveryError)?.permanent, false)
            XCTAssertFalse(String(describing: error).contains("x\""), "the text stays out of errors")
        }
        XCTAssertEqual(server.received.count, 3)
    }
}
