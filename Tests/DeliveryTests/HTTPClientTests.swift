import Delivery
import HTTP
import XCTest

final class HTTPClientTests: XCTestCase {
    var server: HTTPTestServer!

    override func setUpWithError() throws { server = try HTTPTestServer() }
    override func tearDown() { server.stop() }

    func testPostSendsHostLengthHeadersAndBodyAndReadsTheAnswer() throws {
        server.script([.init(status: 201, body: #"{"ok":true}"#)])
        let client = try HTTPClient(timeoutMilliseconds: 2000)
        let url = try HTTPURL(server.url + "/hook?x=1")
        let response = try client.send(HTTPClient.Request(method: "POST", url: url, headers: [("X-Test", "yes")], body: Array("hello".utf8)))
        XCTAssertEqual(response.status, 201)
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), #"{"ok":true}"#)
        let received = try XCTUnwrap(server.received.first)
        XCTAssertEqual(received.method, "POST")
        XCTAssertEqual(received.path, "/hook?x=1")
        XCTAssertEqual(received.header("Host"), "127.0.0.1:\(server.port)")
        XCTAssertEqual(received.header("Content-Length"), "5")
        XCTAssertEqual(received.header("X-Test"), "yes")
        XCTAssertEqual(received.bodyText, "hello")
    }

    func testChunkedAnswerIsReassembled() throws {
        let body = String(repeating: "0123456789", count: 50)
        server.script([.init(status: 200, body: body, chunkSize: 7)])
        let response = try HTTPClient().send(HTTPClient.Request(method: "GET", url: try HTTPURL(server.url + "/")))
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), body)
    }

    func testOversizedAnswerIsRefused() throws {
        server.script([.init(status: 200, body: String(repeating: "x", count: 5000))])
        XCTAssertThrowsError(try HTTPClient(maxResponseBytes: 1000).send(HTTPClient.Request(method: "GET", url: try HTTPURL(server.url + "/"))))
    }

    func testTLSToAPlainServerFailsClearly() throws {
        let url = try HTTPURL("https://127.0.0.1:\(server.port)/")
        XCTAssertThrowsError(try HTTPClient(timeoutMilliseconds: 300).send(HTTPClient.Request(method: "GET", url: url))) { error in
            XCTAssertTrue(String(describing: error).contains("TLS"), "\(error)")
        }
    }

    func testConnectionRefusedIsAnError() throws {
        let port = server.port
        server.stop()
        XCTAssertThrowsError(try HTTPClient(timeoutMilliseconds: 500).send(HTTPClient.Request(method: "GET", url: try HTTPURL("http://127.0.0.1:\(port)/"))))
        server = try HTTPTestServer()
    }

    func testURLParsing() throws {
        let url = try HTTPURL("https://api.twilio.com")
        XCTAssertEqual(url.port, 443)
        XCTAssertEqual(url.path, "/")
        XCTAssertEqual(url.appending(path: "/2010-04-01/Accounts").description, "https://api.twilio.com/2010-04-01/Accounts")
        XCTAssertEqual(try HTTPURL("http://[::1]:8080/a").host, "::1")
        XCTAssertThrowsError(try HTTPURL("ftp://x"))
        XCTAssertThrowsError(try HTTPURL("http://user:pass@host/"))
        XCTAssertEqual(FormEncoding.escape("+1 555/é"), "%2B1%20555%2F%C3%A9")
        XCTAssertEqual(FormEncoding.decode("a=%2B1+2&b=").map(\.1), ["+1 2", ""])
    }
}
