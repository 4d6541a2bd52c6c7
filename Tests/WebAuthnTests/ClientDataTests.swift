import TestSupport
import Secrets
import WebAuthn
import XCTest

final class ClientDataTests: XCTestCase {
    private func reason(_ json: String) -> WebAuthnError.Reason? {
        do {
            _ = try parseClientData(utf8(json))
            XCTFail("accepted \(json)")
            return nil
        } catch {
            return error.reason
        }
    }

    func testMembersAreRead() throws {
        let json = #"{"type":"webauthn.get","challenge":"AAECAwQFBgcICQoLDA0ODw","origin":"https://example.com","crossOrigin":false,"tokenBinding":{"status":"supported"}}"#
        let clientData = try parseClientData(utf8(json))
        XCTAssertEqual(clientData.type, "webauthn.get")
        XCTAssertEqual(clientData.challenge, Array(0..<16))
        XCTAssertEqual(clientData.origin, "https://example.com")
        XCTAssertEqual(clientData.crossOrigin, false)
        XCTAssertNil(clientData.topOrigin)
        let framed = try parseClientData(utf8(#"{"type":"t","challenge":"AQ","origin":"o","crossOrigin":true,"topOrigin":"https://top.example"}"#))
        XCTAssertEqual(framed.crossOrigin, true)
        XCTAssertEqual(framed.topOrigin, "https://top.example")
        XCTAssertNil(try parseClientData(utf8(#"{"type":"t","challenge":"AQ","origin":"o"}"#)).crossOrigin)
    }

    func testChallengeMustBeUnpaddedBase64URL() {
        for challenge in ["", "AQ==", "+/8", "_-8=", "A", "AQ*", "AQ Q"] {
            XCTAssertEqual(reason(#"{"type":"t","challenge":"\#(challenge)","origin":"o"}"#), .malformed, challenge)
        }
        XCTAssertEqual(try parseClientData(utf8(#"{"type":"t","challenge":"_-8","origin":"o"}"#)).challenge, [0xFF, 0xEF])
    }

    func testMissingOrMistypedMembersAreRefused() {
        let refused = [
            #"{"challenge":"AQ","origin":"o"}"#, #"{"type":"t","origin":"o"}"#, #"{"type":"t","challenge":"AQ"}"#,
            #"{"type":1,"challenge":"AQ","origin":"o"}"#, #"{"type":"t","challenge":["AQ"],"origin":"o"}"#,
            #"{"type":"t","challenge":"AQ","origin":null}"#, #"{"type":"t","challenge":"AQ","origin":"o","crossOrigin":"true"}"#,
            #"{"type":"t","challenge":"AQ","origin":"o","topOrigin":1}"#, #"{"type":"t","challenge":"AQ","origin":"o","type":"u"}"#,
            #"["webauthn.get"]"#, #"{"type":"t","challenge":"AQ","origin":"o"} x"#, "", "\u{FEFF}{}",
        ]
        for json in refused { XCTAssertEqual(reason(json), .malformed, json) }
    }

    func testSizeLimit() throws {
        let head = #"{"type":"t","challenge":"AQ","origin":"o","pad":""#
        let fitting = head + String(repeating: "p", count: ClientData.maxBytes - head.utf8.count - 2) + #""}"#
        XCTAssertEqual(fitting.utf8.count, ClientData.maxBytes)
        XCTAssertNoThrow(try parseClientData(utf8(fitting)))
        XCTAssertEqual(reason(head + String(repeating: "p", count: ClientData.maxBytes) + #""}"#), .malformed)
    }
}
