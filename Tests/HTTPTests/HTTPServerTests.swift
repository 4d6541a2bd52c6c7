import Foundation
@testable import HTTP
import LineProtocol
@testable import Platform
@testable import Runtime
import ServerTestSupport
import TestSupport
import XCTest

/// The HTTP server over real TCP on port 0, in-process, over the test routes.
final class HTTPServerTests: XCTestCase {
    func testKeepAliveServesManyRequestsOnOneConnectionWithTheServersHeaders() throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let client = try RawHTTPClient(server.endpoint)
        for index in 0..<50 {
            let response = try client.exchange(RawHTTPClient.post("/v1/t/echo", "{\"n\":\(index)}"))
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(response.json?["result"]?["n"], .int(Int64(index)))
            XCTAssertEqual(response.headers["Server"], "latchkey")
            XCTAssertNotNil(response.headers["Date"])
            XCTAssertNil(response.headers["Connection"])
            XCTAssertEqual(response.headers["Content-Type"], "application/json")
            XCTAssertEqual(response.headers["Cache-Control"], "no-store")
        }
        XCTAssertEqual(server.connectionCount, 1)
    }

    func testPipelinedRequestsAreAnsweredInRequestOrderWhenHandlersFinishOutOfOrder() throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let client = try RawHTTPClient(server.endpoint)
        try client.send(
            RawHTTPClient.post("/v1/t/hold", "{}") + RawHTTPClient.post("/v1/t/echo", #"{"order":2}"#)
                + RawHTTPClient.post("/v1/t/slow", #"{"ms":100}"#) + RawHTTPClient.get("/healthz"))
        // Every later handler finishes while the first still holds.
        waitUntil("the slow handler finishes before the held one") { server.routes.finished.value == 1 && server.routes.paths.count == 4 }
        server.routes.hold.release()
        let first = try XCTUnwrap(client.readResponse())
        XCTAssertEqual(first.json?["result"], "held")
        let second = try XCTUnwrap(client.readResponse())
        XCTAssertEqual(second.json?["result"]?["order"], 2)
        let third = try XCTUnwrap(client.readResponse())
        XCTAssertEqual(third.json?["result"]?["slept_ms"], 100)
        let fourth = try XCTUnwrap(client.readResponse())
        XCTAssertEqual(fourth.status, 200)
        XCTAssertEqual(fourth.json?["status"], "ok")
    }

    func testConnectionCloseAndHTTP10CloseAfterTheResponse() throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let closing = try RawHTTPClient(server.endpoint)
        // The request after `Connection: close` is never answered.
        try closing.send(RawHTTPClient.get("/healthz", headers: ["Connection: close"]) + RawHTTPClient.get("/healthz"))
        let response = try XCTUnwrap(closing.readResponse())
        XCTAssertEqual(response.headers["Connection"], "close")
        XCTAssertTrue(closing.isClosedByServer())

        let old = try RawHTTPClient(server.endpoint)
        let oldResponse = try old.exchange("GET /healthz HTTP/1.0\r\n\r\n")
        XCTAssertEqual(oldResponse.status, 200)
        XCTAssertEqual(oldResponse.headers["Connection"], "close")
        XCTAssertTrue(old.isClosedByServer())

        let keepAlive10 = try RawHTTPClient(server.endpoint)
        let kept = try keepAlive10.exchange("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        XCTAssertEqual(kept.headers["Connection"], "keep-alive")
        XCTAssertEqual(try keepAlive10.exchange("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").status, 200)
    }

    func testHostileRequestsGetTheirStatusThenTheConnectionCloses() throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let cases: [(String, Int)] = [
            ("POST /v1/t/echo HTTP/1.1\r\nHost: a\r\nContent-Length: 70000\r\n\r\n", 413),
            ("GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + String(repeating: "b", count: 17_000) + "\r\n\r\n", 431),
            ("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\nHost: a\r\n\r\n", 414),
            // Smuggling: the bytes after the first head would be a second request to a naive parser.
            ("POST /v1/t/echo HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /metrics HTTP/1.1\r\nHost: a\r\n\r\n", 400),
            ("POST /v1/t/echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n", 400),
            ("POST /v1/t/echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 501),
            ("GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n folded\r\n\r\n", 400),
            ("GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
        ]
        for (request, status) in cases {
            let client = try RawHTTPClient(server.endpoint)
            let response = try XCTUnwrap(client.exchange(request) as RawHTTPResponse?)
            XCTAssertEqual(response.status, status, request.prefix(60).debugDescription)
            XCTAssertEqual(response.headers["Connection"], "close")
            XCTAssertTrue(client.isClosedByServer(), "nothing after a refused request is answered")
        }
        XCTAssertFalse(server.routes.paths.all.contains("/metrics"), "no smuggled request reached the handler")
    }

    func testARefusedRequestIsAnsweredAfterTheGoodOnesBeforeIt() throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let client = try RawHTTPClient(server.endpoint)
        try client.send(RawHTTPClient.post("/v1/t/slow", #"{"ms":200}"#) + "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n")
        XCTAssertEqual(try client.readResponse()?.status, 200)
        XCTAssertEqual(try client.readResponse()?.status, 400)
        XCTAssertTrue(client.isClosedByServer())
    }

    func testSlowHeadersAreCutOffWith408WhileAnotherClientIsServed() throws {
        var limits = HTTPLimits()
        limits.headerTimeoutMilliseconds = 400
        limits.bodyTimeoutMilliseconds = 400
        let server = try TestHTTPServer(limits: limits)
        defer { server.stop() }
        let slow = try RawHTTPClient(server.endpoint)
        try slow.send("GET /healthz HTTP/1.1\r\nHost: a\r\n")
        let slowBody = try RawHTTPClient(server.endpoint)
        try slowBody.send("POST /v1/t/echo HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n{\"a\"")
        let good = try RawHTTPClient(server.endpoint)
        var served = 0
        for _ in 0..<20 where try good.exchange(RawHTTPClient.get("/healthz")).status == 200 { served += 1 }
        XCTAssertEqual(served, 20, "others are served while a slow client dawdles")
        // Trickling bytes does not reset the head timer: a header line every 50 ms (the slow
        // client is the attack under test, so its pauses stay) for up to 5 s would hold the
        // connection open to the end if it did; the cut-off comes while it still trickles.
        let trickled = Counter()
        let trickler = JoinableThread(name: "trickler") {
            // Ends by itself: a send fails soon after the server closes the connection.
            for _ in 0..<100 {
                guard (try? slow.send("X-Trickle: 1\r\n")) != nil else { return }
                trickled.add()
                usleep(50_000)
            }
        }
        let cutOff = try XCTUnwrap(slow.readResponse())
        trickler.join()
        XCTAssertEqual(cutOff.status, 408)
        XCTAssertEqual(cutOff.headers["Connection"], "close")
        XCTAssertTrue(slow.isClosedByServer())
        XCTAssertLessThan(trickled.value, 100, "cut off while still trickling")
        XCTAssertEqual(try slowBody.readResponse()?.status, 408)
        XCTAssertTrue(slowBody.isClosedByServer())
        XCTAssertEqual(try good.exchange(RawHTTPClient.get("/healthz")).status, 200)
    }

    func testAClientThatNeverReadsIsCutOffAndOthersAreServed() throws {
        var limits = HTTPLimits()
        limits.writeTimeoutMilliseconds = 300
        limits.outboundHighWaterBytes = 64 * 1024
        let server = try TestHTTPServer(limits: limits)
        defer { server.stop() }
        let hog = try RawHTTPClient(server.endpoint)
        hog.setReceiveBuffer(4096)
        let big = "{\"pad\":\"" + String(repeating: "p", count: 60_000) + "\"}"
        // Many large responses that are never read: the kernel buffers fill, then ours, then the timer fires.
        // The hog writes from its own thread: once the server stops reading, its sends block.
        let request = RawHTTPClient.post("/v1/t/echo", big)
        let sender = Thread {
            for _ in 0..<200 { guard (try? hog.send(request)) != nil else { return } }
        }
        sender.start()
        let good = try RawHTTPClient(server.endpoint)
        XCTAssertEqual(try good.exchange(RawHTTPClient.get("/healthz")).status, 200)
        waitUntil("the hog is cut off") { server.connectionCount == 1 }
        XCTAssertEqual(try good.exchange(RawHTTPClient.get("/healthz")).status, 200)
    }

    func testIdleKeepAliveConnectionsAreClosed() throws {
        var limits = HTTPLimits()
        limits.idleTimeoutMilliseconds = 300
        let server = try TestHTTPServer(limits: limits)
        defer { server.stop() }
        let client = try RawHTTPClient(server.endpoint)
        XCTAssertEqual(try client.exchange(RawHTTPClient.get("/healthz")).status, 200)
        // Not closed early: a request right after an answer is still served on the same connection.
        XCTAssertEqual(try client.exchange(RawHTTPClient.get("/healthz")).status, 200)
        XCTAssertTrue(client.isClosedByServer())
    }

    func testConnectionsBeyondTheLimitGet503() throws {
        var limits = HTTPLimits()
        limits.maxConnections = 2
        let server = try TestHTTPServer(limits: limits)
        defer { server.stop() }
        let first = try RawHTTPClient(server.endpoint)
        let second = try RawHTTPClient(server.endpoint)
        XCTAssertEqual(try first.exchange(RawHTTPClient.get("/healthz")).status, 200)
        XCTAssertEqual(try second.exchange(RawHTTPClient.get("/healthz")).status, 200)
        let third = try RawHTTPClient(server.endpoint)
        XCTAssertEqual(try third.readResponse()?.status, 503)
        XCTAssertTrue(third.isClosedByServer())
    }

    func testConnectionsFromOneAddressBeyondItsLimitGet503AndTheSlotIsFreedOnClose() throws {
        var limits = HTTPLimits()
        limits.maxConnectionsPerAddress = 1
        let server = try TestHTTPServer(limits: limits)
        defer { server.stop() }
        var first: RawHTTPClient? = try RawHTTPClient(server.endpoint)
        XCTAssertEqual(try first?.exchange(RawHTTPClient.get("/healthz")).status, 200)
        let second = try RawHTTPClient(server.endpoint)
        XCTAssertEqual(try second.readResponse()?.status, 503)
        first = nil
        waitUntil("the server sees the first connection close") { server.connectionCount == 0 }
        let third = try RawHTTPClient(server.endpoint)
        XCTAssertEqual(try third.exchange(RawHTTPClient.get("/healthz")).status, 200)
    }

    func testExpectContinueGets100BeforeTheBody() throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let client = try RawHTTPClient(server.endpoint)
        try client.send("POST /v1/t/echo HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 7\r\n\r\n")
        XCTAssertEqual(try client.readResponse()?.status, 100)
        try client.send(#"{"x":1}"#)
        let response = try XCTUnwrap(client.readResponse())
        XCTAssertEqual(response.json?["result"]?["x"], 1)
    }

    func testHeadGetsHeadersWithoutABody() throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let client = try RawHTTPClient(server.endpoint)
        try client.send("HEAD /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
        let head = try XCTUnwrap(client.readResponse(headRequest: true))
        XCTAssertEqual(head.status, 200)
        XCTAssertNotEqual(head.headers["Content-Length"], "0")
        XCTAssertEqual(try client.exchange(RawHTTPClient.get("/healthz")).status, 200, "no stray body bytes on the connection")
    }

    func testDrainFinishesInflightRequestsWithConnectionClose() throws {
        let server = try TestHTTPServer()
        let client = try RawHTTPClient(server.endpoint)
        try client.send(RawHTTPClient.post("/v1/t/hold", "{}"))
        XCTAssertTrue(server.routes.hold.waitUntilHeld())
        let stopped = DispatchSemaphore(value: 0)
        Thread {
            server.stop()
            stopped.signal()
        }.start()
        waitUntil("the server drains") { server.state == .draining }
        server.routes.hold.release()
        let response = try XCTUnwrap(client.readResponse())
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.headers["Connection"], "close")
        XCTAssertTrue(client.isClosedByServer())
        XCTAssertEqual(stopped.wait(timeout: .now() + 5), .success)
    }

    func testHandlerTimeoutAnswers504AndTheLateAnswerIsDropped() throws {
        var limits = HTTPLimits()
        limits.requestTimeoutMilliseconds = 200
        let server = try TestHTTPServer(limits: limits)
        defer { server.stop() }
        let client = try RawHTTPClient(server.endpoint)
        let response = try client.exchange(RawHTTPClient.post("/v1/t/hold", "{}"))
        XCTAssertEqual(response.status, 504)
        XCTAssertEqual(response.json?["error"]?["data"]?["reason"], "timeout")
        server.routes.hold.release()
        waitUntil("the late handler answers") { server.routes.finished.value == 1 }
        XCTAssertEqual(try client.exchange(RawHTTPClient.post("/v1/t/echo", #"{"after":1}"#)).json?["result"]?["after"], 1)
    }
}
