import Foundation
import Secrets
import XCTest

@testable import Identity

/// `identity.verify_signature`: accounts asks whether the session's device signed a transfer's bytes.
final class KeyConfirmationTests: IdentityTestCase {
    let phone = FakeiPhone(deviceID: "iphone-1")
    let bytes = Array("latchkey-transfer-v1\namount=100".utf8)

    private var userID: String { get throws { try XCTUnwrap(try service.store.user(username: "alice")).userID } }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try registerUser()
    }

    private func enroll(_ protection: String = "biometry") throws -> String {
        let session = try elevatedLogin()
        return try service.enrollKey(token: session.session, deviceID: phone.deviceID, publicKey: phone.publicKeyBase64, protection: protection, caller: caller)
    }

    private func verify(_ signature: [UInt8], message: [UInt8]? = nil, device: String = "iphone-1") throws -> String {
        try service.verifySignature(
            userID: try userID, deviceID: device, message: Base64URL.encode(message ?? bytes), signature: Data(signature).base64EncodedString(), caller: caller)
    }

    func testOnlyTheDevicesBiometryKeySigningTheseVeryBytesPasses() throws {
        assertReason("not_found") { try verify(phone.key.signature(for: bytes)) }
        let keyID = try enroll()
        XCTAssertEqual(try verify(phone.key.signature(for: bytes)), keyID)
        assertReason("invalid_credentials") { try verify(phone.key.signature(for: bytes + [0])) }
        assertReason("invalid_credentials") { try verify(P256PrivateKey().signature(for: bytes)) }
        assertReason("not_found") { try verify(phone.key.signature(for: bytes), device: "iphone-2") }
        let events = try service.store.events(userID: try userID, limit: 10, before: nil)
        XCTAssertEqual(events.filter { $0.outcome == "device_key" }.map(\.event), ["factor.failed", "factor.failed", "factor.passed"])
    }

    func testAUserPresenceKeyOrARevokedKeyCannotConfirm() throws {
        let keyID = try enroll("user_presence")
        let refused = assertReason("not_found") { try verify(phone.key.signature(for: bytes)) }
        XCTAssertEqual(refused?.data?["detail"], "not_biometry")
        try service.revokeKey(token: try elevatedLogin().session, keyID: keyID, caller: caller)
        XCTAssertEqual(assertReason("not_found") { try verify(phone.key.signature(for: bytes)) }?.data?["detail"], "key_revoked")
    }
}
