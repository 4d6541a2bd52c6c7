import Foundation
import LatchkeyClient
import XCTest

/// The API's shapes as the client meets them: a parameter a method does not take is refused by
/// name with the accepted list, internal methods stay out of reach, and the code's language is the app's.
final class ApiShapesEndToEndTests: ClientStackTestCase {
    /// `identity.preferences` with a misspelt member, as an app's own request type might send it.
    private struct MisspeltPreferences: LatchkeyRequest {
        typealias Response = LatchkeyClient.Identity.Preferences.Response
        static let method = "identity.preferences", session = SessionUse.required, retry = RetryClass.never
        var sms_verifcation = false
    }

    /// `verification.status`, internal since the API review: the client has no call for it.
    private struct VerificationStatus: LatchkeyRequest {
        typealias Response = OK
        static let method = "verification.status", session = SessionUse.required, retry = RetryClass.safe
        let request_id: String
    }

    func testAnUnknownParameterIsRefusedByNameWithTheAcceptedOnes() async throws {
        let client = try client()
        try await signInWithCode(client)
        await XCTAssertThrowsLatchkeyError(.invalidParams(field: "sms_verifcation", rule: nil, accepted: ["locale", "session", "sitekey", "sms_verification"])) {
            try await client.send(MisspeltPreferences())
        }
    }

    func testVerificationStatusIsNotAPublicMethod() async throws {
        let client = try client()
        try await signInWithCode(client)
        let error = await latchkeyError { try await client.send(VerificationStatus(request_id: "vr_verification_AAAAAAAAAAAAAAAAAAAAAA")) }
        guard case .methodNotFound = error else { return XCTFail("expected method_not_found, got \(String(describing: error))") }
    }

    func testTheLocaleChoosesTheCodesLanguage() async throws {
        let client = try client()
        _ = try await client.signIn(username: "demo", password: demoPassword, deviceID: "iphone-1")
        let started = try await client.startCode(channel: .sms, locale: "fr")
        let message = try await awaitMessage { $0["request_id"]?.stringValue == started.requestID }
        let text = try XCTUnwrap(message["text"]?.stringValue)
        XCTAssertTrue(text.contains("votre code est"), "a French text: \(text)")
        await XCTAssertThrowsLatchkeyError(.invalidParams(field: "locale", rule: nil)) {
            try await client.startCode(channel: .sms, locale: "xx-not-a-language")
        }
    }
}
