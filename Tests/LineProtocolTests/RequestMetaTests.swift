import XCTest
@testable import LineProtocol

/// `meta` between services: read into named fields on the common line (no dictionary), written
/// back member by member, and lenient the way a dictionary read was (strays and wrong types ignored).
final class RequestMetaTests: XCTestCase {
    private let full = RequestMeta(client: "203.0.113.9", requestID: RequestID(issuer: RequestIDIssuer(prefix: "gw-0a1b\"2c3d-", connection: 4, client: "203.0.113.9"), request: 17), budgetMilliseconds: 4999, token: "s\"ecret")

    func testAForwardedRequestIsReadBackAsItWasWritten() {
        let request = RPCRequest(method: "identity.ping", params: ["k": 1], id: 7, meta: full)
        XCTAssertEqual(RPCDecoder.decode(line: request.encoded()), .single(.request(request)))
        XCTAssertEqual(RPCDecoder.decodeInGeneral(line: request.encoded()), .single(.request(request)))
        let partial = RPCRequest(method: "a.b", id: 1, meta: RequestMeta(token: "t"))
        XCTAssertEqual(String(decoding: partial.encoded(), as: UTF8.self), #"{"jsonrpc":"2.0","id":1,"method":"a.b","meta":{"token":"t"}}"#)
        XCTAssertEqual(String(decoding: RPCRequest(method: "a", id: 1, meta: RequestMeta()).encoded(), as: UTF8.self), #"{"jsonrpc":"2.0","id":1,"method":"a","meta":{}}"#)
    }

    /// A forwarded call's members around `params` are gathered on the stack when they fit in
    /// its room there, and written piece by piece when they do not: the same line either way.
    func testAForwardedCallTooLongToGatherIsWrittenTheSame() throws {
        let issuer = RequestIDIssuer(prefix: "gw-0a1b2c3d-", connection: 3, client: "10.0.0.1")
        for size in [1, 200, 300, 5_000] {
            let long = String(repeating: "x", count: size)
            for (method, token, id) in [(long, "t", JSON.int(9)), ("a.b", long, JSON.string(long)), ("a.b", "t", JSON.int(9))] {
                let request = RPCRequest(method: method, params: ["k": .string(long)], id: id)
                var line: [UInt8] = []
                request.append(to: &line, client: "10.0.0.1", requestID: RequestID(issuer: issuer, request: 77), budgetMilliseconds: 1_500, token: token)
                let expected = RPCRequest(
                    method: method, params: ["k": .string(long)], id: id,
                    meta: RequestMeta(client: "10.0.0.1", requestID: RequestID("gw-0a1b2c3d-3.77"), budgetMilliseconds: 1_500, token: token))
                XCTAssertEqual(RPCDecoder.decodeInGeneral(line: line), .single(.request(expected)), "\(size)")
                XCTAssertEqual(line, expected.encoded(), "\(size)")
            }
        }
    }

    /// Numbers gathered on the stack are written digit by digit where they go: every width, the
    /// extremes, and a number whose digits cross the end of the room (then written to the array).
    func testNumbersGatheredOnTheStackReadBackAsWritten() throws {
        let numbers: [Int64] = [0, 7, 9, 10, 99, 100, 12_345, -1, -10, 999_999_999_999_999_999, .max, .min]
        for number in numbers {
            for padding in [0, 200, 215, 225, 235, 240, 245] {
                let request = RPCRequest(method: String(repeating: "m", count: padding + 1), id: .int(number))
                var line: [UInt8] = []
                request.append(to: &line, client: nil, requestID: nil, budgetMilliseconds: number, token: nil)
                let expected = RPCRequest(method: request.method, id: .int(number), meta: RequestMeta(budgetMilliseconds: number))
                XCTAssertEqual(line, expected.encoded(), "\(number) \(padding)")
                XCTAssertEqual(RPCDecoder.decodeInGeneral(line: line), .single(.request(expected)), "\(number) \(padding)")
            }
            var answer: [UInt8] = []
            RPCReply.encodedResult(RawJSON(.int(number))).append(id: .int(number), to: &answer)
            XCTAssertEqual(String(decoding: answer, as: UTF8.self), #"{"jsonrpc":"2.0","id":\#(number),"result":\#(number)}"#)
        }
    }

    /// An answer passed through as encoded opens with its id gathered on the stack; an id too
    /// long for that room (a caller's string) is written piece by piece, the same.
    func testAnAnswerWithAnIdTooLongToGatherIsWrittenTheSame() throws {
        for size in [1, 250, 300, 4_000] {
            let id = JSON.string(String(repeating: "i", count: size))
            var line: [UInt8] = []
            RPCReply.encodedResult(RawJSON(["ok": true])).append(id: id, to: &line)
            XCTAssertEqual(line, RPCResponse(id: id, result: ["ok": true]).encoded(), "\(size)")
        }
    }

    func testTheCommonLineIsReadWithoutTheGeneralParser() throws {
        let line = Array(#"{"jsonrpc":"2.0","id":3,"method":"a","meta":{"budget_ms":250,"client":"10.0.0.2","request_id":"r-1"}}"#.utf8)
        let read = try XCTUnwrap(line.withUnsafeBufferPointer { JSONParser.parseRequestEnvelope($0, limits: .default) })
        XCTAssertEqual(read.meta, RequestMeta(client: "10.0.0.2", requestID: RequestID("r-1"), budgetMilliseconds: 250))
        // A member it does not know goes the general way, which ignores it.
        let stray = Array(#"{"jsonrpc":"2.0","id":3,"method":"a","meta":{"client":"c","trace":{"x":1}}}"#.utf8)
        XCTAssertNil(stray.withUnsafeBufferPointer { JSONParser.parseRequestEnvelope($0, limits: .default) })
        XCTAssertEqual(RPCDecoder.decode(line: stray), .single(.request(RPCRequest(method: "a", id: 3, meta: RequestMeta(client: "c")))))
    }

    /// Every `meta` our encoder writes (any members present, strings that need escaping) is read
    /// by matching its members' openings; any other shape by name. Both read what the general
    /// parser reads.
    func testEveryWrittenMetaAndEveryOtherShapeReadAsTheGeneralParserReadsThem() {
        for mask in 0..<16 {
            let meta = RequestMeta(
                client: mask & 1 != 0 ? "203.0.113.9" : nil, requestID: mask & 2 != 0 ? RequestID("r\"1\u{1}é") : nil,
                budgetMilliseconds: mask & 4 != 0 ? -250 : nil, token: mask & 8 != 0 ? "t\\k" : nil)
            let line = RPCRequest(method: "a", id: 1, meta: meta).encoded()
            XCTAssertEqual(RPCDecoder.decode(line: line), .single(.request(RPCRequest(method: "a", id: 1, meta: meta))), "\(mask)")
            XCTAssertEqual(RPCDecoder.decode(line: line), RPCDecoder.decodeInGeneral(line: line), "\(mask)")
        }
        let others = [
            #"{"client":"c","client":"d"}"#, #"{"request_id":"r","client":"c"}"#, #"{"client":"c","budget_ms":1.5}"#,
            #"{"client":"c","budget_ms":12345678901234567890}"#, #"{"client":"c","budget_ms":9223372036854775807}"#,
            #"{"client":"c","budget_ms":01}"#, #"{"client":5}"#, #"{"client":"c" }"#, #"{ "client":"c"}"#, #"{"client":"c","x":1}"#,
            #"{"client":"c","token":"t","budget_ms":3}"#, #"{"client":"unterminated}"#, #"{"budget_ms":-0}"#, #"{}"#, #"{"#, "[]",
        ]
        for meta in others {
            let line = Array(#"{"jsonrpc":"2.0","id":1,"method":"a","meta":"#.utf8) + Array(meta.utf8) + [0x7D]
            XCTAssertEqual(RPCDecoder.decode(line: line), RPCDecoder.decodeInGeneral(line: line), meta)
        }
    }

    func testAMemberOfTheWrongTypeIsIgnoredAndADuplicateIsRefused() {
        let wrongTypes = Array(#"{"jsonrpc":"2.0","id":1,"method":"a","meta":{"client":5,"request_id":["x"],"budget_ms":"9","token":null}}"#.utf8)
        XCTAssertEqual(RPCDecoder.decode(line: wrongTypes), .single(.request(RPCRequest(method: "a", id: 1, meta: RequestMeta()))))
        let twice = Array(#"{"jsonrpc":"2.0","id":1,"method":"a","meta":{"token":"a","token":"b"}}"#.utf8)
        guard case .failure(let refusal) = RPCDecoder.decode(line: twice) else { return XCTFail("a duplicate meta member was accepted") }
        XCTAssertEqual(refusal.error?.code, -32700)
    }
}

final class RequestIDTests: XCTestCase {
    func testAnIssuedIdIsWrittenAsItReads() {
        let ids = [
            RequestID(issuer: RequestIDIssuer(prefix: "gw-0a1b2c3d-", connection: 7, client: nil), request: 0),
            RequestID(issuer: RequestIDIssuer(prefix: "id\\\"1\n-", connection: nil, client: "c"), request: UInt64.max),
            RequestID("given \u{1} id"),
        ]
        for id in ids {
            var written: [UInt8] = []
            id.append(to: &written)
            XCTAssertEqual(try JSONParser.parse(written), .string(id.description))
        }
        XCTAssertEqual(ids[0].description, "gw-0a1b2c3d-7.0")
        XCTAssertEqual(RequestID("gw-0a1b2c3d-7.0"), ids[0])
    }

    /// A forwarded call's `meta` opens with bytes its id's issuer encoded once: they must be the
    /// bytes written member by member, for the issuer's own client, another client or none, and
    /// for prefixes and clients that need escaping.
    func testAMetaOpenedFromTheIssuersBytesIsTheMetaWrittenMemberByMember() {
        let clients: [String?] = [nil, "203.0.113.9", "::1", "a\"b\\c\u{1}", "é"]
        for prefix in ["gw-0a1b2c3d-", "p\"\\\n-", ""] {
            for connection in [nil, 0, 12, UInt64.max] as [UInt64?] {
                for issuerClient in clients {
                    let issuer = RequestIDIssuer(prefix: prefix, connection: connection, client: issuerClient)
                    for request in [0, 1, 987_654_321, UInt64.max] as [UInt64] {
                        let issued = RequestID(issuer: issuer, request: request)
                        let spelled = RequestID(issued.description)
                        for client in clients {
                            for (budget, token) in [(nil, nil), (250, nil), (nil, "t\"k"), (0, "t")] as [(Int64?, String?)] {
                                let fast = RequestMeta(client: client, requestID: issued, budgetMilliseconds: budget, token: token)
                                let slow = RequestMeta(client: client, requestID: spelled, budgetMilliseconds: budget, token: token)
                                var fastBytes: [UInt8] = []
                                var slowBytes: [UInt8] = []
                                fast.append(to: &fastBytes)
                                slow.append(to: &slowBytes)
                                if fastBytes != slowBytes {
                                    XCTFail("\(String(decoding: fastBytes, as: UTF8.self)) is not \(String(decoding: slowBytes, as: UTF8.self))")
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
