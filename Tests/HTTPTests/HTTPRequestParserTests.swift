@testable import HTTP
import XCTest

/// The HTTP/1.1 request parser without sockets: bytes in, events out; fed whole, byte by byte
/// and in random chunks; and every hostile framing the smuggling rules forbid.
final class HTTPRequestParserTests: XCTestCase {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Feeds `input` in the given chunk sizes (cycled) and collects every event.
    private func events(_ input: [UInt8], chunks: [Int] = [], limits: HTTPParserLimits = HTTPParserLimits()) -> [HTTPParseEvent] {
        var parser = HTTPRequestParser(limits: limits)
        var out: [HTTPParseEvent] = []
        var offset = 0
        var chunkIndex = 0
        while offset < input.count {
            let size = chunks.isEmpty ? input.count : max(1, chunks[chunkIndex % chunks.count])
            chunkIndex += 1
            let end = min(input.count, offset + size)
            parser.append(input[offset..<end])
            offset = end
            while let event = parser.next() { out.append(event) }
        }
        return out
    }

    private func requests(_ events: [HTTPParseEvent]) -> [HTTPRequest] {
        events.compactMap { if case .request(let request) = $0 { return request } else { return nil } }
    }

    private func failure(_ text: String, limits: HTTPParserLimits = HTTPParserLimits()) -> Int? {
        for event in events(bytes(text), limits: limits) {
            if case .failure(let failure) = event { return failure.status }
        }
        return nil
    }

    private let pipeline =
        "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
        + "POST /v1/gateway/ping HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"a\":[1,2]}"
        + "\r\n"  // a stray CRLF between requests is tolerated
        + "GET /metrics?x=1 HTTP/1.0\r\nX-Empty:\r\nX-Spaces:   v  \r\n\r\n"
        + "DELETE http://example.com/v1/a/b?q HTTP/1.1\r\nHost: example.com\r\nConnection: keep-alive, close\r\n\r\n"

    private func checkPipeline(_ parsed: [HTTPRequest], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(parsed.map(\.method), ["GET", "POST", "GET", "DELETE"], file: file, line: line)
        XCTAssertEqual(parsed.map(\.path), ["/healthz", "/v1/gateway/ping", "/metrics", "/v1/a/b"], file: file, line: line)
        XCTAssertEqual(parsed.map(\.keepAlive), [true, true, false, false], file: file, line: line)
        XCTAssertEqual(parsed[1].body, bytes("{\"a\":[1,2]}"), file: file, line: line)
        XCTAssertEqual(parsed[1].headers["content-type"], "application/json", file: file, line: line)
        XCTAssertEqual(parsed[2].query, "x=1", file: file, line: line)
        XCTAssertEqual(parsed[2].version, .http1_0, file: file, line: line)
        XCTAssertEqual(parsed[2].headers["x-empty"], "", file: file, line: line)
        XCTAssertEqual(parsed[2].headers["X-SPACES"], "v", file: file, line: line)
        XCTAssertEqual(parsed[3].query, "q", file: file, line: line)
    }

    func testPipelinedRequestsParseTheSameWholeByteByByteAndInRandomChunks() {
        let input = bytes(pipeline)
        checkPipeline(requests(events(input)))
        checkPipeline(requests(events(input, chunks: [1])))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let chunks = (0..<8).map { _ in Int.random(in: 1...40, using: &generator) }
            let all = events(input, chunks: chunks)
            XCTAssertEqual(all.count, 4, "chunks \(chunks)")
            checkPipeline(requests(all))
        }
    }

    func testKeepAliveDefaultsAndOverrides() {
        func keepAlive(_ version: String, _ connection: String?) -> Bool? {
            let header = connection.map { "Connection: \($0)\r\n" } ?? ""
            return requests(events(bytes("GET / \(version)\r\nHost: a\r\n\(header)\r\n"))).first?.keepAlive
        }
        XCTAssertEqual(keepAlive("HTTP/1.1", nil), true)
        XCTAssertEqual(keepAlive("HTTP/1.1", "close"), false)
        XCTAssertEqual(keepAlive("HTTP/1.1", "Upgrade, CLOSE"), false)
        XCTAssertEqual(keepAlive("HTTP/1.0", nil), false)
        XCTAssertEqual(keepAlive("HTTP/1.0", "keep-alive"), true)
        XCTAssertEqual(keepAlive("HTTP/1.0", "Keep-Alive, close"), false)
    }

    func testExpectContinueIsOfferedOnceBeforeTheBody() {
        var parser = HTTPRequestParser()
        parser.append(bytes("POST /rpc HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n"))
        XCTAssertEqual(parser.next(), .continueExpected)
        XCTAssertNil(parser.next())
        XCTAssertEqual(parser.phase, .body)
        parser.append(bytes("{}"))
        guard case .request(let request)? = parser.next() else { return XCTFail("expected the request") }
        XCTAssertEqual(request.body, bytes("{}"))
        XCTAssertEqual(parser.phase, .idle)
        XCTAssertEqual(failure("POST / HTTP/1.1\r\nHost: a\r\nExpect: magic\r\n\r\n"), 417)
    }

    func testPhaseTracksPartialHeadAndBody() {
        var parser = HTTPRequestParser()
        XCTAssertEqual(parser.phase, .idle)
        parser.append(bytes("GET / HTTP/1.1\r\nHo"))
        XCTAssertNil(parser.next())
        XCTAssertEqual(parser.phase, .head)
        parser.append(bytes("st: a\r\n\r\n"))
        XCTAssertNotNil(parser.next())
        XCTAssertEqual(parser.phase, .idle)
    }

    // MARK: Hostile input

    func testRequestSmugglingFramingsAreRefused() {
        let cases: [(String, Int)] = [
            ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", 501),
            ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n", 501),
            ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", 400),
            ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400),
            ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 3\r\n\r\nabc", 400),
            ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\nabc", 400),
            ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x3\r\n\r\nabc", 400),
            ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3 3\r\n\r\nabc", 400),
            ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999999\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 70000\r\n\r\n", 413),
            ("GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n folded\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n\tfolded\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\r\nContent-Length : 3\r\n\r\nabc", 400),
            ("GET / HTTP/1.1\r\nHost: a\r\nX A: 1\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\r\n: empty name\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\r\nX-A: a\rb\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\r\nX-A: a\u{0}b\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\r\nX-A: a\u{7}b\r\n\r\n", 400),
            ("GET / HTTP/1.1\nHost: a\n\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\nX-A: b\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
            ("GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
            ("GET / HTTP/1.2\r\nHost: a\r\n\r\n", 505),
            ("GET / HTTP/0.9\r\nHost: a\r\n\r\n", 505),
            ("GET / HTTP/1.10\r\nHost: a\r\n\r\n", 400),
            ("GET / http/1.1\r\nHost: a\r\n\r\n", 400),
            ("GET /\r\nHost: a\r\n\r\n", 400),
            ("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
            ("GET / HTTP/1.1 \r\nHost: a\r\n\r\n", 400),
            ("G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
            ("GET nopath HTTP/1.1\r\nHost: a\r\n\r\n", 400),
            ("GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400),
            ("GET //evil HTTP/1.1\r\nHost: a\r\n\r\n", 400),
            ("GET /\u{7F} HTTP/1.1\r\nHost: a\r\n\r\n", 400),
            ("\r\n\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ]
        for (text, status) in cases {
            XCTAssertEqual(failure(text), status, text.debugDescription)
        }
    }

    func testSizeLimitsGive414And431And413() {
        let longTarget = "GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\nHost: a\r\n\r\n"
        XCTAssertEqual(failure(longTarget), 414)
        var manyHeaders = "GET / HTTP/1.1\r\nHost: a\r\n"
        for index in 0..<64 { manyHeaders += "X-\(index): v\r\n" }
        XCTAssertEqual(failure(manyHeaders + "\r\n"), 431, "65 fields")
        let bigHeader = "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + String(repeating: "b", count: 17000) + "\r\n\r\n"
        XCTAssertEqual(failure(bigHeader), 431)
        var limits = HTTPParserLimits()
        limits.maxBodyBytes = 10
        XCTAssertEqual(failure("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n", limits: limits), 413)
        XCTAssertNil(failure("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123456789", limits: limits))
    }

    func testLimitsAreEnforcedBeforeTheHeadEnds() {
        // A peer that never sends CRLF CRLF must not make the parser buffer without bound.
        var parser = HTTPRequestParser()
        parser.append(bytes("GET /" + String(repeating: "a", count: 8200)))
        guard case .failure(let lineFailure)? = parser.next() else { return XCTFail("expected 414 before the end of the line") }
        XCTAssertEqual(lineFailure.status, 414)
        XCTAssertEqual(parser.phase, .failed)
        XCTAssertNil(parser.next())

        var headers = HTTPRequestParser()
        headers.append(bytes("GET / HTTP/1.1\r\nHost: a\r\n"))
        for _ in 0..<200 {
            headers.append(bytes("X-Filler: " + String(repeating: "f", count: 90) + "\r\n"))
            if let event = headers.next() {
                guard case .failure(let failure) = event else { return XCTFail("expected a failure") }
                XCTAssertEqual(failure.status, 431)
                return
            }
        }
        XCTFail("a head growing past the limit was never refused")
    }

    func testAFailureAfterGoodRequestsComesInOrderAndEndsParsing() {
        let input = "GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n"
        let all = events(bytes(input))
        XCTAssertEqual(all.count, 2)
        XCTAssertEqual(requests(all).map(\.path), ["/a"])
        guard case .failure(let failure) = all[1] else { return XCTFail("expected a failure second") }
        XCTAssertEqual(failure.status, 400)
    }

    func testObsTextInValuesIsKeptAndAbsoluteFormIsReducedToItsPath() {
        let parsed = requests(events(bytes("GET https://h.example HTTP/1.1\r\nHost: h.example\r\nX-Name: caf\u{E9}\r\n\r\n")))
        XCTAssertEqual(parsed.first?.path, "/")
        XCTAssertEqual(parsed.first?.headers["x-name"], "caf\u{E9}")
    }

    func testRandomMutationsOfValidRequestsNeverCrashAndAlwaysEndInARequestOrAFailure() {
        var generator = SystemRandomNumberGenerator()
        let valid = bytes(pipeline)
        let interesting: [UInt8] = [0x00, 0x0D, 0x0A, 0x20, 0x09, 0x3A, 0x2C, 0x7F, 0xFF, UInt8(ascii: "0"), UInt8(ascii: "-")]
        for _ in 0..<2000 {
            var input = valid
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let index = Int.random(in: 0..<input.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: input[index] = interesting.randomElement(using: &generator)!
                case 1: input.insert(interesting.randomElement(using: &generator)!, at: index)
                default: input.remove(at: index)
                }
            }
            var parser = HTTPRequestParser()
            parser.append(input)
            var count = 0
            while let event = parser.next() {
                count += 1
                XCTAssertLessThan(count, 100)
                if case .failure(let failure) = event {
                    XCTAssertTrue([400, 413, 414, 417, 431, 501, 505].contains(failure.status), "\(failure)")
                    XCTAssertNil(parser.next(), "nothing after a failure")
                    break
                }
            }
            XCTAssertLessThanOrEqual(parser.bufferedByteCount, input.count)
        }
    }
}
