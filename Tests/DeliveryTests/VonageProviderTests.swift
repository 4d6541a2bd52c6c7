import Delivery
import HTTP
import XCTest

final class VonageProviderTests: XCTestCase {
    var server: HTTPTestServer!

    override func setUpWithError() throws { server = try HTTPTestServer() }
    override func tearDown() { server.stop() }

    func provider() throws -> VonageProvider {
        VonageProvider(
            apiKey: "abcd1234", apiSecret: "s3cr3t+/=", from: "Latchkey", client: try HTTPClient(timeoutMilliseconds: 2000),
            baseURL: try HTTPURL(server.url), retry: RetryPolicy(maxAttempts: 2, initialBackoffMilliseconds: 10))
    }

    func testSendsTheDocumentedFormToSmsJson() throws {
        server.script([.init(status: 200, body: #"{"message-count":"1","messages":[{"to":"15555550100","message-id":"0A0000000123ABCD1","status":"0"}]}"#)])
        try provider().deliver(OutgoingMessage(channel: .sms, to: "+15555550100", text: "Latchkey: your code is 123456.", requestID: "vr_verification_x"))
        let received = try XCTUnwrap(server.received.first)
        XCTAssertEqual(received.method, "POST")
        XCTAssertEqual(received.path, "/sms/json")
        XCTAssertEqual(received.header("Content-Type"), "application/x-www-form-urlencoded")
        let form = Dictionary(uniqueKeysWithValues: FormEncoding.decode(received.bodyText))
        XCTAssertEqual(form["api_key"], "abcd1234")
        XCTAssertEqual(form["api_secret"], "s3cr3t+/=")
        XCTAssertEqual(form["from"], "Latchkey")
        XCTAssertEqual(form["to"], "15555550100", "international format without +")
        XCTAssertEqual(form["text"], "Latchkey: your code is 123456.")
        XCTAssertNil(form["type"], "plain text needs no type")
        XCTAssertEqual(form["client-ref"], "vr_verification_x")
    }

    func testCyrillicGoesAsUnicode() throws {
        server.script([.init(status: 200, body: #"{"message-count":"1","messages":[{"status":"0"}]}"#)])
        try provider().deliver(OutgoingMessage(channel: .sms, to: "+79123456789", text: "Банк: ваш код 123456."))
        let form = Dictionary(uniqueKeysWithValues: FormEncoding.decode(try XCTUnwrap(server.received.first).bodyText))
        XCTAssertEqual(form["type"], "unicode")
        XCTAssertEqual(form["text"], "Банк: ваш код 123456.")
    }

    func testNonZeroStatusIsAFailureAndThrottlingIsRetried() throws {
        server.script([
            .init(status: 200, body: #"{"message-count":"1","messages":[{"status":"1","error-text":"Throughput Rate Exceeded"}]}"#),
            .init(status: 200, body: #"{"message-count":"1","messages":[{"status":"0"}]}"#),
        ])
        try provider().deliver(OutgoingMessage(channel: .sms, to: "+15555550100", text: "x"))
        XCTAssertEqual(server.received.count, 2)
        server.script([.init(status: 200, body: #"{"message-count":"1","messages":[{"status":"4","error-text":"Bad Credentials"}]}"#)])
        XCTAssertThrowsError(try provider().deliver(OutgoingMessage(channel: .sms, to: "+15555550100", text: "x"))) { error in
            XCTAssertEqual((error as? DeliveryError)?.detail, "status 4: Bad Credentials (after 1 attempt)")
            XCTAssertEqual((error as? DeliveryError)?.permanent, true)
        }
        XCTAssertThrowsError(try provider().deliver(OutgoingMessage(channel: .voice, to: "+15555550100", text: "x")))
    }
}
