import Delivery
import LineProtocol
import Storage
import XCTest

@testable import Verification

class StartCheckTests: VerificationTestCase {
    func testStartSendsSixDigitCodeAndIdNamesReplica() throws {
        let harness = try makeHarness()
        let id = try harness.start()
        XCTAssertTrue(id.hasPrefix("vr_test-1_"), id)
        let stampAndRandom = id.dropFirst("vr_test-1_".count)
        XCTAssertTrue(stampAndRandom.prefix(14).allSatisfy(\.isHexDigit), id)
        XCTAssertEqual(Base64URLLength.of(String(stampAndRandom.dropFirst(14))), 16)
        let message = try XCTUnwrap(harness.provider.sent.last)
        XCTAssertEqual(message.channel, .sms)
        XCTAssertEqual(message.to, "+15555550100")
        XCTAssertEqual(message.requestID, id)
        XCTAssertTrue(message.text.hasPrefix("Latchkey: your code is "), message.text)
        XCTAssertEqual(harness.code(id).count, 6)
    }

    /// Requests and their messages are keyed by id: ids issued in order land on the newest leaf of
    /// each index, so starts committed together write its pages once instead of one page each.
    func testRequestAndDeliveryIDsSortInTheOrderTheyWereIssued() throws {
        let harness = try makeHarness()
        let requests = try (0..<30).map { try harness.start(number: "+1555555\(1000 + $0)") }
        XCTAssertEqual(requests, requests.sorted())
        let deliveryOf = Dictionary(harness.provider.sent.map { ($0.requestID, $0.deliveryID) }, uniquingKeysWith: { first, _ in first })
        let deliveries = try requests.map { try XCTUnwrap(deliveryOf[$0] ?? nil, "no message sent for \($0)") }
        XCTAssertEqual(deliveries, deliveries.sorted())
    }

    func testCorrectCodeVerifiesOnceThenConflict() throws {
        let harness = try makeHarness()
        let id = try harness.start { $0.userID = "u_1"; $0.provenNumber = $0.number }
        let result = try harness.check(id, harness.code(id))
        XCTAssertEqual(result.userID, "u_1")
        XCTAssertEqual(result.channel, .sms)
        XCTAssertVerificationError(.conflict("this verification is already verified", status: "verified"), try harness.check(id, harness.code(id)))
    }

    func testThirdWrongCodeFailsTheRequest() throws {
        let harness = try makeHarness()
        let id = try harness.start()
        let code = harness.code(id)
        XCTAssertVerificationError(.invalidCode(attemptsLeft: 2), try harness.check(id, wrong(code)))
        XCTAssertVerificationError(.invalidCode(attemptsLeft: 1), try harness.check(id, "12345"))
        XCTAssertVerificationError(.tooManyAttempts, try harness.check(id, wrong(code)))
        // Even the right code cannot revive it.
        XCTAssertVerificationError(.tooManyAttempts, try harness.check(id, code))
        let status = try harness.service.status(requestID: id, owner: nil)
        XCTAssertEqual(status["status"], "failed")
        XCTAssertEqual(status["attempts_left"], 0)
    }

    func testCodeExpiresAfterDefaultFiveMinutes() throws {
        let harness = try makeHarness()
        let id = try harness.start()
        harness.clock.advance(seconds: 299)
        let code = harness.code(id)
        XCTAssertVerificationError(.invalidCode(attemptsLeft: 2), try harness.check(id, wrong(code)))
        harness.clock.advance(seconds: 1)
        XCTAssertVerificationError(.expired, try harness.check(id, code))
        XCTAssertEqual(try harness.service.status(requestID: id, owner: nil)["status"], "expired")
    }

    func testCustomExpiryAndBounds() throws {
        let harness = try makeHarness()
        let id = try harness.start { $0.codeExpirySeconds = 60 }
        harness.clock.advance(seconds: 60)
        XCTAssertVerificationError(.expired, try harness.check(id, harness.code(id)))
        XCTAssertVerificationError(
            .invalidParams("code_expiry_s must be between 30 and 600", field: "code_expiry_s"),
            try harness.start(number: "+15555550101") { $0.codeExpirySeconds = 601 })
    }

    func testCodeLengthRulesLoginNeverBelowSix() throws {
        let harness = try makeHarness()
        let short = try harness.start(number: "+15555550101") { $0.codeLength = 4 }
        XCTAssertEqual(harness.code(short).count, 4)
        let long = try harness.start(number: "+15555550102") { $0.codeLength = 10 }
        XCTAssertEqual(harness.code(long).count, 10)
        XCTAssertVerificationError(
            .invalidParams("code_length must be between 6 and 10", field: "code_length"),
            try harness.start(number: "+15555550103", purpose: .login) { $0.codeLength = 4 })
        XCTAssertVerificationError(
            .invalidParams("code_length must be between 4 and 10", field: "code_length"),
            try harness.start(number: "+15555550104") { $0.codeLength = 11 })
    }

    func testConcurrentStartForSameNumberAnswersExistingRequest() throws {
        let harness = try makeHarness { $0.perNumber = [SendLimit(count: 10, windowSeconds: 600)] }
        let first = try harness.start()
        XCTAssertVerificationError(.concurrentVerification(requestID: first), try harness.start())
        XCTAssertEqual(harness.provider.sent.count, 1, "nothing new is sent")
        _ = try harness.service.cancel(requestID: first, owner: nil, logger: harness.logger)
        let second = try harness.start()
        _ = try harness.check(second, harness.code(second))
        let third = try harness.start()
        harness.clock.advance(seconds: 300)
        XCTAssertNotEqual(try harness.start(), third, "an expired request no longer blocks the number")
    }

    func testCodeIsStoredOnlyAsKeyedHash() throws {
        let harness = try makeHarness()
        let id = try harness.start()
        let code = harness.code(id)
        let row = try XCTUnwrap(try harness.database.read { try $0.queryOne("SELECT * FROM requests WHERE id = ?", [.text(id)]) })
        for value in row.values {
            XCTAssertNotEqual(value, .text(code))
            if case .blob(let bytes) = value { XCTAssertNotEqual(bytes, Array(code.utf8)) }
        }
        XCTAssertEqual(try row.blob("code_hash").count, 32)
        let status = try harness.service.status(requestID: id, owner: nil).text
        XCTAssertFalse(status.contains(code))
        XCTAssertFalse(harness.logSink.capturedText.contains(code), "the code never reaches the log")
    }

    func testNonDigitCodeIsInvalidParamsAndDoesNotCount() throws {
        let harness = try makeHarness()
        let id = try harness.start()
        XCTAssertVerificationError(.invalidParams("code must be a string of digits", field: "code"), try harness.check(id, "12a456"))
        XCTAssertVerificationError(.invalidCode(attemptsLeft: 2), try harness.check(id, wrong(harness.code(id))))
    }

    func testUnknownRequestIsNotFound() throws {
        let harness = try makeHarness()
        XCTAssertVerificationError(.notFound, try harness.check("vr_test-1_nothing", "123456"))
        XCTAssertVerificationError(.notFound, try harness.service.status(requestID: "vr_x_y", owner: nil))
    }

    func testNumberValidationAndCountryAllowList() throws {
        let harness = try makeHarness { $0.allowedCountries = ["FR", "US"] }
        XCTAssertVerificationError(
            .invalidParams("number must be an E.164 phone number (+ and 8-15 digits)", field: "number"), try harness.start(number: "5555550100"))
        XCTAssertVerificationError(
            .invalidParams("codes are not sent to this country", field: "number", rule: "country_not_allowed"),
            try harness.start(number: "+7 912 345 67 89"))
        XCTAssertVerificationError(
            .invalidParams("codes are not sent to this country", field: "number", rule: "country_not_allowed"),
            try harness.start(number: "+1 876 555 0100"), "Jamaica shares +1 but is not US")
        _ = try harness.start(number: "+33 6 12 34 56 78")
        XCTAssertEqual(harness.provider.sent.last?.to, "+33612345678")
        XCTAssertVerificationError(
            .invalidParams("number does not belong to country", field: "country"), try harness.start(number: "+15555550100") { $0.country = "FR" })
    }

    func testDeliveryFailureIsRecordedAndNotSilent() throws {
        let harness = try makeHarness()
        harness.provider.fail(.sms)
        // The start is answered once the message is queued; the send's failure shows in the status.
        let failedID = try harness.start()
        let status = try harness.service.status(requestID: failedID, owner: nil)
        XCTAssertEqual(status["status"], "failed")
        let kinds = status["events"]?.arrayValue?.compactMap { $0["kind"]?.stringValue }
        XCTAssertEqual(kinds, ["started", "delivery_failed"])
        XCTAssertEqual(status["events"]?.arrayValue?.last?["detail"], "recording: provider said no")
        harness.provider.fail(.sms, false)
        _ = try harness.start()  // the failed one does not hold the number
    }
}

enum Base64URLLength {
    static func of(_ text: String) -> Int? { Base64URLDecode.bytes(text)?.count }
}

import Secrets

enum Base64URLDecode {
    static func bytes(_ text: String) -> [UInt8]? { Base64URL.decode(text) }
}
