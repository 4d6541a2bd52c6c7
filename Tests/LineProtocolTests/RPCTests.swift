import XCTest

@testable import LineProtocol

/// JSON-RPC 2.0 specification, section 7, checked at the decode level.
final class RPCSpecificationExampleTests: XCTestCase {
    private func decode(_ text: String) -> RPCMessage { RPCDecoder.decode(line: Array(text.utf8)) }

    private func assertInvalid(_ entry: RPCEntry, id: JSON, file: StaticString = #filePath, line: UInt = #line) {
        guard case .invalid(let response) = entry, case .failure(let error) = response.outcome else {
            return XCTFail("expected an invalid entry, got \(entry)", file: file, line: line)
        }
        XCTAssertEqual(response.id, id, file: file, line: line)
        XCTAssertEqual(error.code, -32600, file: file, line: line)
        XCTAssertEqual(error.reason, .invalidRequest, file: file, line: line)
    }

    private func assertFailure(_ message: RPCMessage, code: Int, file: StaticString = #filePath, line: UInt = #line) {
        guard case .failure(let response) = message, case .failure(let error) = response.outcome else {
            return XCTFail("expected a failure, got \(message)", file: file, line: line)
        }
        XCTAssertEqual(response.id, .null, file: file, line: line)
        XCTAssertEqual(error.code, code, file: file, line: line)
    }

    func testPositionalParameters() {
        XCTAssertEqual(
            decode(#"{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}"#),
            .single(.request(RPCRequest(method: "subtract", params: [42, 23], id: 1))))
    }

    func testNamedParameters() {
        XCTAssertEqual(
            decode(#"{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}"#),
            .single(.request(RPCRequest(method: "subtract", params: ["subtrahend": 23, "minuend": 42], id: 3))))
    }

    func testNotificationsHaveNoID() {
        guard case .single(.request(let request)) = decode(#"{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}"#)
        else { return XCTFail() }
        XCTAssertTrue(request.isNotification)
        XCTAssertEqual(request.params, [1, 2, 3, 4, 5])
        XCTAssertEqual(decode(#"{"jsonrpc": "2.0", "method": "foobar"}"#), .single(.request(RPCRequest(method: "foobar", id: nil))))
    }

    func testNullIDIsNotANotification() {
        guard case .single(.request(let request)) = decode(#"{"jsonrpc": "2.0", "method": "foobar", "id": null}"#)
        else { return XCTFail() }
        XCTAssertFalse(request.isNotification)
        XCTAssertEqual(request.id, .null)
    }

    func testNonExistentMethodDecodesAndAnswersMethodNotFound() throws {
        XCTAssertEqual(decode(#"{"jsonrpc": "2.0", "method": "foobar", "id": "1"}"#),
            .single(.request(RPCRequest(method: "foobar", id: "1"))))
        let answer = RPCResponse(id: "1", error: .methodNotFound("foobar")).encoded()
        XCTAssertEqual(try JSONParser.parse(answer),
            ["jsonrpc": "2.0", "id": "1", "error": ["code": -32601, "message": "method not found",
                "data": ["reason": "method_not_found", "method": "foobar"]]])
    }

    func testInvalidJSONIsAParseErrorWithNullID() {
        assertFailure(decode(#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#), code: -32700)
    }

    func testInvalidRequestObjectAnswersWithNullID() {
        guard case .single(let entry) = decode(#"{"jsonrpc": "2.0", "method": 1, "params": "bar"}"#) else { return XCTFail() }
        assertInvalid(entry, id: .null)
    }

    func testBatchWithInvalidJSONIsOneParseError() {
        assertFailure(decode("""
            [
              {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
              {"jsonrpc": "2.0", "method"
            ]
            """), code: -32700)
    }

    func testEmptyArrayIsOneInvalidRequest() {
        assertFailure(decode("[]"), code: -32600)
    }

    func testInvalidBatchOfOneNumber() {
        guard case .batch(let entries) = decode("[1]") else { return XCTFail() }
        XCTAssertEqual(entries.count, 1)
        assertInvalid(entries[0], id: .null)
    }

    func testInvalidBatchOfThreeNumbers() {
        guard case .batch(let entries) = decode("[1,2,3]") else { return XCTFail() }
        XCTAssertEqual(entries.count, 3)
        for entry in entries { assertInvalid(entry, id: .null) }
    }

    func testMixedBatch() throws {
        let line = """
            [
                {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
                {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
                {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
                {"foo": "boo"},
                {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
                {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
            ]
            """
        guard case .batch(let entries) = decode(line) else { return XCTFail() }
        XCTAssertEqual(entries.count, 6)
        XCTAssertEqual(entries[0], .request(RPCRequest(method: "sum", params: [1, 2, 4], id: "1")))
        XCTAssertEqual(entries[1], .request(RPCRequest(method: "notify_hello", params: [7], id: nil)))
        XCTAssertEqual(entries[2], .request(RPCRequest(method: "subtract", params: [42, 23], id: "2")))
        assertInvalid(entries[3], id: .null)
        XCTAssertEqual(entries[4], .request(RPCRequest(method: "foo.get", params: ["name": "myself"], id: "5")))
        XCTAssertEqual(entries[5], .request(RPCRequest(method: "get_data", id: "9")))

        // Five answers (the notification gets none) make one array line.
        var collector = BatchCollector(expecting: 5)
        XCTAssertNil(collector.add(RPCResponse(id: "1", result: 7)))
        XCTAssertNil(collector.add(RPCResponse(id: "2", result: 19)))
        XCTAssertNil(collector.add(RPCResponse(id: .null, error: .invalidRequest("invalid request"))))
        XCTAssertNil(collector.add(RPCResponse(id: "5", error: .methodNotFound("foo.get"))))
        let batch = try XCTUnwrap(collector.add(RPCResponse(id: "9", result: ["hello", 5])))
        XCTAssertTrue(collector.isComplete)
        let answers = try XCTUnwrap(JSONParser.parse(batch).arrayValue)
        XCTAssertEqual(answers.compactMap(RPCResponse.decode).map(\.id), ["1", "2", .null, "5", "9"])
        XCTAssertNotEqual(batch.last, 0x0A)
    }

    func testBatchOfOnlyNotificationsExpectsNoAnswer() {
        let line = """
            [{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]
            """
        guard case .batch(let entries) = decode(line) else { return XCTFail() }
        let answering = entries.filter {
            if case .request(let request) = $0 { return !request.isNotification }
            return true
        }
        XCTAssertEqual(entries.count, 2)
        XCTAssertEqual(answering.count, 0)
        XCTAssertTrue(BatchCollector(expecting: 0).isComplete)
    }
}

final class RPCEnvelopeTests: XCTestCase {
    private func entry(_ text: String) -> RPCEntry? {
        guard case .single(let entry) = RPCDecoder.decode(line: Array(text.utf8)) else { return nil }
        return entry
    }

    private func invalidID(_ text: String) -> JSON? {
        guard case .invalid(let response)? = entry(text), case .failure(let error) = response.outcome,
            error.code == -32600
        else { return nil }
        return response.id
    }

    func testMalformedRequestsEchoAValidIDAndOtherwiseNull() {
        XCTAssertEqual(invalidID(#"{"method":"a","id":7}"#), 7, "missing jsonrpc")
        XCTAssertEqual(invalidID(#"{"jsonrpc":"1.0","method":"a","id":"x"}"#), "x", "wrong version")
        XCTAssertEqual(invalidID(#"{"jsonrpc":2.0,"method":"a","id":1.5}"#), 1.5, "version not a string")
        XCTAssertEqual(invalidID(#"{"jsonrpc":"2.0","id":7}"#), 7, "missing method")
        XCTAssertEqual(invalidID(#"{"jsonrpc":"2.0","method":null,"id":7}"#), 7, "method not a string")
        XCTAssertEqual(invalidID(#"{"jsonrpc":"2.0","method":"a","params":3,"id":7}"#), 7, "params a number")
        XCTAssertEqual(invalidID(#"{"jsonrpc":"2.0","method":"a","params":null,"id":7}"#), 7, "params null")
        XCTAssertEqual(invalidID(#"{"jsonrpc":"2.0","method":"a","id":{"x":1}}"#), .null, "object id")
        XCTAssertEqual(invalidID(#"{"jsonrpc":"2.0","method":"a","id":[1]}"#), .null, "array id")
        XCTAssertEqual(invalidID(#"{"jsonrpc":"2.0","method":"a","id":true}"#), .null, "bool id")
        XCTAssertEqual(invalidID(#""just a string""#), .null, "not an object")
    }

    func testReservedRPCMethodsStillDecode() {
        XCTAssertEqual(entry(#"{"jsonrpc":"2.0","method":"rpc.discover","id":1}"#),
            .request(RPCRequest(method: "rpc.discover", id: 1)))
    }

    func testMetaIsDecodedWhenAnObjectAndIgnoredOtherwise() {
        XCTAssertEqual(entry(#"{"jsonrpc":"2.0","method":"a","id":1,"meta":{"client":"10.0.0.1"}}"#),
            .request(RPCRequest(method: "a", id: 1, meta: RequestMeta(client: "10.0.0.1"))))
        XCTAssertEqual(entry(#"{"jsonrpc":"2.0","method":"a","id":1,"meta":"x"}"#), .request(RPCRequest(method: "a", id: 1)))
    }

    func testBatchLargerThanTheLimitIsRefusedAsAWhole() {
        let request = #"{"jsonrpc":"2.0","method":"a","id":1}"#
        let three = "[" + Array(repeating: request, count: 3).joined(separator: ",") + "]"
        guard case .batch(let entries) = RPCDecoder.decode(line: Array(three.utf8), maxBatch: 3) else { return XCTFail() }
        XCTAssertEqual(entries.count, 3)
        guard case .failure(let response) = RPCDecoder.decode(line: Array(three.utf8), maxBatch: 2),
            case .failure(let error) = response.outcome
        else { return XCTFail() }
        XCTAssertEqual(error.code, -32600)
        XCTAssertEqual(error.reason, .invalidRequest)
        XCTAssertTrue(error.message.contains("2"), error.message)
        XCTAssertEqual(response.id, .null)
    }

    func testParseErrorsRespectLimitsAndNeverEchoTheLine() {
        let line = Array(#"{"jsonrpc":"2.0","method":"login","params":{"password":"hunter2"},"id":1"#.utf8)
        guard case .failure(let response) = RPCDecoder.decode(line: line), case .failure(let error) = response.outcome
        else { return XCTFail() }
        XCTAssertEqual(error.code, -32700)
        XCTAssertEqual(error.reason, .parseError)
        XCTAssertFalse(response.encoded().contains(Array("hunter2".utf8)))
        XCTAssertFalse(String(decoding: response.encoded(), as: UTF8.self).contains("hunter2"))
        let deep = Array((String(repeating: "[", count: 10) + String(repeating: "]", count: 10)).utf8)
        guard case .failure = RPCDecoder.decode(line: deep, limits: JSONLimits(maxDepth: 5)) else { return XCTFail() }
        guard case .failure = RPCDecoder.decode(line: line[...].dropLast(0)) else { return XCTFail() }
    }

    func testRequestEncodingRoundTrips() throws {
        let requests = [
            RPCRequest(method: "identity.login", params: ["user": "ann"], id: 5, meta: RequestMeta(client: "1.2.3.4")),
            RPCRequest(method: "notify", params: [1, 2], id: nil),
            RPCRequest(method: "x", id: .null),
            RPCRequest(method: "x\"\n", params: .object([:]), id: "abc"),
            RPCRequest(method: "x", id: 2.5),
        ]
        for request in requests {
            XCTAssertEqual(RPCDecoder.decode(line: request.encoded()), .single(.request(request)), request.encoded().description)
        }
        XCTAssertEqual(String(decoding: RPCRequest(method: "m", params: [1], id: 1).encoded(), as: UTF8.self),
            #"{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}"#)
        XCTAssertEqual(String(decoding: RPCRequest(method: "m", id: nil).encoded(), as: UTF8.self),
            #"{"jsonrpc":"2.0","method":"m"}"#)
    }

    func testResponseEncodingPutsJSONRPCThenIDThenOutcome() {
        XCTAssertEqual(String(decoding: RPCResponse(id: 1, result: ["ok": true]).encoded(), as: UTF8.self),
            #"{"jsonrpc":"2.0","id":1,"result":{"ok":true}}"#)
        XCTAssertEqual(String(decoding: RPCResponse(id: "a", error: RPCError(.locked, "account locked", extra: ["retry_after": 30])).encoded(), as: UTF8.self),
            #"{"jsonrpc":"2.0","id":"a","error":{"code":423,"data":{"reason":"locked","retry_after":30},"message":"account locked"}}"#)
    }

    func testResponseDecodeRoundTripsAndRefusesMalformedResponses() throws {
        let responses = [RPCResponse(id: 1, result: nil), RPCResponse(id: "x", result: [1]),
            RPCResponse(id: .null, error: .parseError("parse error")), RPCResponse(id: 3, error: RPCError(code: 7, message: "m"))]
        for response in responses {
            XCTAssertEqual(RPCResponse.decode(try JSONParser.parse(response.encoded())), response)
        }
        let malformed: [JSON] = [
            ["id": 1, "result": 1],
            ["jsonrpc": "2.0", "result": 1],
            ["jsonrpc": "2.0", "id": 1],
            ["jsonrpc": "2.0", "id": 1, "result": 1, "error": ["code": 1, "message": "m"]],
            ["jsonrpc": "2.0", "id": 1, "error": ["code": "1", "message": "m"]],
            ["jsonrpc": "2.0", "id": 1, "error": ["code": 1]],
            ["jsonrpc": "2.0", "id": true, "result": 1],
            [1],
        ]
        for json in malformed { XCTAssertNil(RPCResponse.decode(json), json.text) }
    }
}

final class RPCErrorTests: XCTestCase {
    func testReasonCodesFollowTheTable() {
        let expected: [Reason: Int] = [
            .parseError: -32700, .invalidRequest: -32600, .lineTooLong: -32600, .methodNotFound: -32601,
            .invalidParams: -32602, .internal: -32603, .unauthenticated: 401, .invalidCredentials: 401,
            .stepUpRequired: 403, .notFound: 404, .conflict: 409, .concurrentVerification: 409, .expired: 410,
            .invalidCode: 422, .weakPassword: 422, .insufficientFunds: 422, .locked: 423, .rateLimited: 429,
            .tooManyAttempts: 410, .invalidToken: 400, .unavailable: 503, .overloaded: 503, .timeout: 504,
        ]
        XCTAssertEqual(Set(expected.keys), Set(Reason.allCases))
        for reason in Reason.allCases { XCTAssertEqual(reason.code, expected[reason], reason.rawValue) }
    }

    func testReasonSlugsMatchTheDesign() {
        let slugs = ["invalid_params", "unauthenticated", "step_up_required", "invalid_credentials", "locked",
            "rate_limited", "invalid_code", "too_many_attempts", "expired", "concurrent_verification",
            "insufficient_funds", "not_found", "conflict", "weak_password", "invalid_token", "unavailable", "timeout",
            "internal", "parse_error", "invalid_request", "method_not_found", "line_too_long", "overloaded"]
        XCTAssertEqual(Set(Reason.allCases.map(\.rawValue)), Set(slugs))
        XCTAssertEqual(Reason.allCases.count, slugs.count)
    }

    func testHTTPStatusMapsProtocolCodes() {
        XCTAssertEqual(Reason.parseError.httpStatus, 400)
        XCTAssertEqual(Reason.invalidRequest.httpStatus, 400)
        XCTAssertEqual(Reason.invalidParams.httpStatus, 400)
        XCTAssertEqual(Reason.methodNotFound.httpStatus, 404)
        XCTAssertEqual(Reason.internal.httpStatus, 500)
        XCTAssertEqual(Reason.locked.httpStatus, 423)
        XCTAssertEqual(Reason.timeout.httpStatus, 504)
    }

    func testReasonInitializerPutsReasonAndExtraInData() {
        let error = RPCError(.rateLimited, "slow down", extra: ["retry_after": 10, "reason": "spoofed"])
        XCTAssertEqual(error.code, 429)
        XCTAssertEqual(error.message, "slow down")
        XCTAssertEqual(error.data, ["reason": "rate_limited", "retry_after": 10])
        XCTAssertEqual(error.reason, .rateLimited)
        XCTAssertNil(RPCError(code: 1, message: "m").reason)
        // A reason from a newer peer is no case here, and still reaches the logs as sent.
        let newer = RPCError(code: 400, message: "m", data: ["reason": "passkey_required"])
        XCTAssertNil(newer.reason)
        XCTAssertEqual(newer.reasonText, "passkey_required")
    }

    func testFactoriesBuildTheStandardErrors() {
        XCTAssertEqual(RPCError.parseError("bad").code, -32700)
        XCTAssertEqual(RPCError.invalidRequest("bad").reason, .invalidRequest)
        XCTAssertEqual(RPCError.methodNotFound("a.b"),
            RPCError(code: -32601, message: "method not found", data: ["reason": "method_not_found", "method": "a.b"]))
        XCTAssertEqual(RPCError.invalidParams("amount must be positive", field: "amount").data,
            ["reason": "invalid_params", "field": "amount"])
        XCTAssertEqual(RPCError.invalidParams("bad").data, ["reason": "invalid_params"])
        XCTAssertEqual(RPCError.internalError(), RPCError(code: -32603, message: "internal error", data: ["reason": "internal"]))
    }

    func testErrorJSONRoundTrips() {
        let error = RPCError(.invalidCode, "wrong code", extra: ["attempts_left": 2])
        XCTAssertEqual(error.json, ["code": 422, "message": "wrong code", "data": ["reason": "invalid_code", "attempts_left": 2]])
        XCTAssertEqual(RPCError.decode(error.json), error)
        XCTAssertEqual(RPCError(code: 5, message: "m").json, ["code": 5, "message": "m"])
        XCTAssertNil(RPCError.decode(["code": 1.5, "message": "m"]))
    }

    func testBatchCollectorReturnsTheArrayOnlyOnTheLastAnswer() throws {
        var collector = BatchCollector(expecting: 2)
        XCTAssertNil(collector.add(RPCResponse(id: 2, result: "b")))
        XCTAssertFalse(collector.isComplete)
        let line = try XCTUnwrap(collector.add(RPCResponse(id: 1, result: "a")))
        XCTAssertEqual(String(decoding: line, as: UTF8.self),
            #"[{"jsonrpc":"2.0","id":2,"result":"b"},{"jsonrpc":"2.0","id":1,"result":"a"}]"#)
    }
}
