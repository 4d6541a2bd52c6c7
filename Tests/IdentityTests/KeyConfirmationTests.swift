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

    private func enroll(_ protection: String = "biometry", from device: FakeiPhone? = nil) throws -> String {
        let session = try elevatedLogin()
        let device = device ?? phone
        return try service.enrollKey(token: session.session, deviceID: device.deviceID, publicKey: device.publicKeyBase64, protection: protection, caller: caller)
    }

    private func verify(_ signature: [UInt8], message: [UInt8]? = nil, device: String = "iphone-1") throws -> String {
        try service.verifySignature(
            userID: try userID, deviceID: device, message: Base64URL.encode(message ?? bytes), signature: Data(signature).base64EncodedString(), caller: caller)
    }

    func testOnlyTheDevicesBiometryKeySigningTheseVeryBytesPasses() throws {
        assertReason(.notFound) { try verify(phone.key.signature(for: bytes)) }
        let keyID = try enroll()
        XCTAssertEqual(try verify(phone.key.signature(for: bytes)), keyID)
        assertReason(.invalidCredentials) { try verify(phone.key.signature(for: bytes + [0])) }
        assertReason(.invalidCredentials) { try verify(P256PrivateKey().signature(for: bytes)) }
        assertReason(.notFound) { try verify(phone.key.signature(for: bytes), device: "iphone-2") }
        let events = try service.store.events(userID: try userID, limit: 10, before: nil)
        XCTAssertEqual(events.filter { $0.outcome == "device_key" }.map(\.event), ["factor.failed", "factor.failed", "factor.passed"])
    }

    func testAUserPresenceKeyOrARevokedKeyCannotConfirm() throws {
        let keyID = try enroll("user_presence")
        let refused = assertReason(.notFound) { try verify(phone.key.signature(for: bytes)) }
        XCTAssertEqual(refused?.data?["detail"], "not_biometry")
        try service.revokeKey(token: try elevatedLogin().session, keyID: keyID, caller: caller)
        XCTAssertEqual(assertReason(.notFound) { try verify(phone.key.signature(for: bytes)) }?.data?["detail"], "key_revoked")
    }

    /// Parsing a point costs as much as checking a signature: a device's key is parsed once,
    /// whatever its signatures say.
    func testADeviceKeyIsParsedOnceHoweverManySignaturesItChecks() throws {
        let keyID = try enroll()
        for _ in 0..<3 { XCTAssertEqual(try verify(phone.key.signature(for: bytes)), keyID) }
        assertReason(.invalidCredentials) { try verify(P256PrivateKey().signature(for: bytes)) }
        XCTAssertEqual(service.parsedKeys.statistics.parsed, 1)
    }

    /// The parsed key is only a faster way to use the bytes the database holds: a revoked key
    /// stops confirming at once, and the device's next key is checked as itself.
    func testACachedKeyStopsConfirmingOnceRevokedAndTheDevicesNextKeyIsItsOwn() throws {
        let first = try enroll()
        XCTAssertEqual(try verify(phone.key.signature(for: bytes)), first)
        try service.revokeKey(token: try elevatedLogin().session, keyID: first, caller: caller)
        XCTAssertEqual(assertReason(.notFound) { try verify(phone.key.signature(for: bytes)) }?.data?["detail"], "key_revoked")
        let samePhoneNewKey = FakeiPhone(deviceID: phone.deviceID)
        let second = try enroll(from: samePhoneNewKey)
        assertReason(.invalidCredentials) { try verify(phone.key.signature(for: bytes)) }
        XCTAssertEqual(try verify(samePhoneNewKey.key.signature(for: bytes)), second)
        XCTAssertEqual(service.parsedKeys.statistics.parsed, 2)
    }

    func testTheCacheHoldsAtMostItsCapacityAndKeepsNoRefusedPoint() throws {
        let cache = ParsedKeyCache(capacity: 2)
        let points = (0..<3).map { _ in P256PrivateKey().publicKey.x963 }
        for point in points + points.prefix(1) { XCTAssertEqual(try cache.key(x963: point).x963, point) }
        XCTAssertEqual(cache.statistics.held, 2)
        XCTAssertEqual(cache.statistics.parsed, 4, "the first point came back after the cache started over")
        var offCurve = points[0]
        offCurve[64] ^= 1
        XCTAssertThrowsError(try cache.key(x963: offCurve))
        XCTAssertEqual(cache.statistics.parsed, 4)
        XCTAssertEqual(cache.statistics.held, 2)
    }
}
