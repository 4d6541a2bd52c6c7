import Contract
import LineProtocol
import XCTest

/// A form's check of a call's parameters, the first thing every router and the gateway run.
final class FormCheckTests: XCTestCase {
    private let form = MethodContract.Form(params: [Fields.session, Fields.requestID, Fields.limit], result: [], errors: [])

    private func refusal(_ members: [String: JSON]) -> RPCError? {
        do {
            try form.check(members, method: "t.list")
            return nil
        } catch {
            return error
        }
    }

    func testAnUnknownNameIsRefusedBeforeAMissingOneAndTheAcceptedNamesAreListed() throws {
        let error = try XCTUnwrap(refusal(["limitt": 5]))
        XCTAssertEqual(error.reason, .invalidParams)
        XCTAssertEqual(error.data?["field"], "limitt")
        XCTAssertEqual(error.data?["accepted"], ["limit", "request_id", "session"])
        XCTAssertEqual(refusal(["b_typo": 1, "a_typo": 2])?.data?["field"], "a_typo", "the first name in order: stable answers")
    }

    func testRequiredNamesMustBePresentAndNotNull() {
        XCTAssertEqual(refusal(["session": "s"])?.data?["field"], "request_id")
        XCTAssertEqual(refusal(["session": "s", "request_id": .null])?.data?["field"], "request_id")
        XCTAssertNil(refusal(["session": "s", "request_id": "r"]))
        XCTAssertNil(refusal(["session": "s", "request_id": "r", "limit": 3]))
        XCTAssertNil(refusal(["session": "s", "request_id": "r", "limit": .null]), "a null optional one is left out")
    }

    func testTheSessionIsTheSessionChecksToRequireAndAnyMethodMayBeGivenOne() throws {
        XCTAssertNil(refusal(["request_id": "r"]), "a missing session is answered unauthenticated by the session check")
        let none = MethodContract.Form(params: [], result: [], errors: [])
        XCTAssertNoThrow(try none.check(["session": "lks_from_a_bearer_header"], method: "t.ping"))
        XCTAssertThrowsError(try none.check(["x": 1], method: "t.ping"))
    }

    func testANameThatDoesNotLookLikeOneIsNeverEchoed() throws {
        for name in ["hunter2 secret", String(repeating: "p", count: 65), "naïve", ""] {
            let error = try XCTUnwrap(refusal([name: 1]), name)
            XCTAssertNil(error.data?["field"], name)
            XCTAssertFalse(error.message.contains(name.isEmpty ? "\u{0}" : name), name)
        }
    }

    func testShapesAreCheckedWithoutEchoingTheValue() {
        XCTAssertEqual(refusal(["request_id": 5])?.message, "request_id must be a string")
        XCTAssertEqual(refusal(["request_id": "r", "limit": 0])?.message, "limit must be at least 1")
        XCTAssertEqual(refusal(["request_id": "r", "limit": "10"])?.message, "limit must be an integer")
        let long = String(repeating: "s3cret", count: 30)
        let error = refusal(["request_id": .string(long)])
        XCTAssertEqual(error?.message, "request_id is longer than 128 bytes")
        XCTAssertEqual(error?.data?["field"], "request_id")
    }
}
