import Delivery
import HTTP
import Secrets
import XCTest

final class TwilioProviderTests: XCTestCase {
    var server: HTTPTestServer!
    let sid = "AC0123456789abcdef0123456789abcdef"

    override func setUpWithError() throws { server = try HTTPTestServer() }
    override func tearDown() { server.stop() }

    func provider(from: String = "+15005550006") throws -> TwilioProvider {
        TwilioProvider(
            accountSID: sid, authToken: "token-xyz", from: from, client: try HTTPClient(timeoutMilliseconds: 2000),
            baseURL: try HTTPURL(server.url), retry: RetryPolicy(maxAttempts: 2, initialBackoffMilliseconds: 10))
    }

    func testPostsTheMessageResourceWithBasicAuth() throws {
        server.script([.init(status: 201, body: #"{"sid":"SM123","status":"queued"}"#)])
        try provider().deliver(OutgoingMessage(channel: .sms, to: "+15555550100", text: "Latchkey: your code is 123456."))
        let received = try XCTUnwrap(server.received.first)
        XCTAssertEqual(received.method, "POST")
        XCTAssertEqual(received.path, "/2010-04-01/Accounts/\(sid)/Messages.json")
        XCTAssertEqual(received.header("Authorization"), "Basic " + Base64.encode(Array("\(sid):token-xyz".utf8)))
        XCTAssertEqual(received.header("Content-Type"), "application/x-www-form-urlencoded")
        XCTAssertEqual(FormEncoding.decode(received.bodyText).map(\.0), ["To", "From", "Body"])
        let form = Dictionary(uniqueKeysWithValues: FormEncoding.decode(received.bodyText))
        XCTAssertEqual(form["To"], "+15555550100")
        XCTAssertEqual(form["From"], "+15005550006")
        XCTAssertEqual(form["Body"], "Latchkey: your code is 123456.")
        XCTAssertTrue(received.bodyText.contains("To=%2B15555550100"))
    }

    func testMessagingServiceSender() throws {
        server.script([.init(status: 201, body: "{}")])
        try provider(from: "MG0123").deliver(OutgoingMessage(channel: .sms, to: "+15555550100", text: "x"))
        let form = Dictionary(uniqueKeysWithValues: FormEncoding.decode(try XCTUnwrap(server.received.first).bodyText))
        XCTAssertEqual(form["MessagingServiceSid"], "MG0123")
        XCTAssertNil(form["From"])
    }

    func testErrorsNameTwilioCodeAndServerErrorsAreRetried() throws {
        server.script([.init(status: 400, body: #"{"code":21211,"message":"The 'To' number is not a valid phone number.","status":400}"#)])
        XCTAssertThrowsError(try provider().deliver(OutgoingMessage(channel: .sms, to: "+1", text: "x"))) { error in
            XCTAssertEqual((error as? DeliveryError)?.detail, "HTTP 400 error 21211: The 'To' number is not a valid phone number. (after 1 attempt)")
        }
        server.script([.init(status: 500, body: ""), .init(status: 201, body: "{}")])
        try provider().deliver(OutgoingMessage(channel: .sms, to: "+15555550100", text: "x"))
        XCTAssertEqual(server.received.count, 3)
    }
}
