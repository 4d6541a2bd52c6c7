import Foundation
import XCTest

@testable import LatchkeyClient

/// Every `data.reason` the protocol documents becomes its own `LatchkeyError` case with its data.
/// The reasons are read from `protocol/README.md` and `protocol/http.md` at test time.
final class ErrorMappingTests: XCTestCase {
    /// The first column of README §3's error table, and the HTTP door's own reasons.
    static func documentedReasons() throws -> [String] {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../protocol")
        let readme = try String(contentsOf: folder.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try XCTUnwrap(readme.components(separatedBy: "## 3. Answers and errors").last?.components(separatedBy: "## 4.").first)
        var reasons = section.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("| `") else { return nil }
            return line.dropFirst(3).prefix { $0 != "`" }.description
        }
        let http = try String(contentsOf: folder.appendingPathComponent("http.md"), encoding: .utf8)
        // "HTTP-level errors (...) use the same body shape ..., with reasons `a`, `b`, ... ."
        let parts = http.components(separatedBy: "HTTP-level errors").last?.components(separatedBy: "with reasons") ?? []
        XCTAssertEqual(parts.count, 2, "http.md names the HTTP door's own reasons in one sentence")
        let sentence = try XCTUnwrap(parts.last?.components(separatedBy: ".").first)
        let httpReasons = sentence.components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        XCTAssertTrue(httpReasons.contains("method_not_allowed"), "the HTTP door's reasons were read: \(httpReasons)")
        reasons += httpReasons
        return reasons
    }

    func testEveryDocumentedReasonMapsToItsOwnCase() throws {
        let reasons = try Self.documentedReasons()
        XCTAssertGreaterThanOrEqual(reasons.count, 24, "the tables were read: \(reasons)")
        for reason in reasons {
            let error = LatchkeyError(status: 400, message: "m", data: ["reason": .string(reason)])
            if case .unrecognized = error { XCTFail("\(reason) has no case of its own") }
            XCTAssertEqual(error.reason, reason)
        }
    }

    func testAnUnknownReasonIsKeptWithItsStatusAndMessage() {
        XCTAssertEqual(
            LatchkeyError(status: 418, message: "a newer server", data: ["reason": "teapot"]),
            .unrecognized(reason: "teapot", status: 418, message: "a newer server"))
    }

    func testEachReasonCarriesItsData() {
        let cases: [([String: JSONValue], LatchkeyError)] = [
            (["reason": "invalid_code", "attempts_left": 2], .invalidCode(attemptsLeft: 2)),
            (["reason": "locked", "retry_after": 30], .locked(retryAfter: 30)),
            (["reason": "rate_limited", "retry_after": 42, "scope": "number"], .rateLimited(retryAfter: 42, scope: "number")),
            (["reason": "invalid_params", "field": "phone", "rule": "phone_not_proven"], .invalidParams(field: "phone", rule: "phone_not_proven")),
            (["reason": "invalid_params", "field": "befor", "accepted": ["before", "limit", "session"]],
             .invalidParams(field: "befor", rule: nil, accepted: ["before", "limit", "session"])),
            (["reason": "conflict", "detail": "totp_active"], .conflict(field: nil, detail: "totp_active", status: nil)),
            (["reason": "not_found", "detail": "no_totp"], .notFound(detail: "no_totp")),
            (["reason": "not_found", "detail": "not_biometry"], .notFound(detail: "not_biometry")),
            (["reason": "locked", "retry_after": 60], .locked(retryAfter: 60)),
            (["reason": "weak_password", "rule": "too_short"], .weakPassword(rule: "too_short")),
            (["reason": "concurrent_verification", "request_id": "vr_a_b"], .concurrentVerification(requestID: "vr_a_b")),
            (["reason": "conflict", "status": "verified"], .conflict(field: nil, detail: nil, status: "verified")),
            (["reason": "conflict", "detail": "key_limit", "limit": 5], .conflict(field: nil, detail: "key_limit", status: nil)),
            (["reason": "not_found", "detail": "key_revoked"], .notFound(detail: "key_revoked")),
            (["reason": "invalid_token", "detail": "used"], .invalidToken(detail: "used")),
            (["reason": "unavailable", "sent": false], .unavailable(sent: false)),
            (["reason": "method_not_found", "method": "identity.introspect"], .methodNotFound(method: "identity.introspect")),
            (["reason": "step_up_required", "detail": "factors_owed", "required_factors": ["sms", "device_key"]],
             .stepUpRequired(.factorsOwed([.sms, .deviceKey]))),
            (["reason": "step_up_required", "detail": "factors_owed", "required_factors": ["totp", "sms"]],
             .stepUpRequired(.factorsOwed([.totp, .sms]))),
            (["reason": "step_up_required", "detail": "recent_step_up", "window_s": 600],
             .stepUpRequired(.recentStepUp(windowSeconds: 600))),
        ]
        for (data, expected) in cases {
            XCTAssertEqual(LatchkeyError(status: 400, message: "m", data: data), expected)
        }
    }

    func testTheRetryAfterHeaderFillsAMissingBodyValue() {
        XCTAssertEqual(LatchkeyError(status: 429, message: "m", data: ["reason": "rate_limited"], retryAfterHeader: 7).retryAfter, 7)
        XCTAssertEqual(LatchkeyError(status: 429, message: "m", data: ["reason": "rate_limited", "retry_after": 3], retryAfterHeader: 7).retryAfter, 3)
    }
}
