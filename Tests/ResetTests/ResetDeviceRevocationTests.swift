import Foundation
import XCTest

@testable import Reset

/// A completed reset also ends every device key and trusted device (identity.revoke_devices),
/// and a failure there leaves the token usable like any other identity failure.
final class ResetDeviceRevocationTests: ResetTestCase {
    func testCompleteRevokesTheUsersDevicesOnce() throws {
        requestNow("alice@example.com")
        try service.complete(token: try lastToken(), password: "a much better password", context: context())
        XCTAssertEqual(identity.callCount("identity.revoke_devices"), 1)
    }

    func testAFailedDeviceRevocationLeavesTheTokenUsable() throws {
        requestNow("alice@example.com")
        let token = try lastToken()
        identity.failing = ["identity.revoke_devices"]
        XCTAssertThrowsError(try service.complete(token: token, password: "a much better password", context: context())) {
            XCTAssertEqual($0 as? ResetError, .unavailable)
        }
        identity.failing = []
        XCTAssertNoThrow(try service.complete(token: token, password: "a much better password", context: context()))
        XCTAssertEqual(identity.callCount("identity.revoke_devices"), 2)
    }

    func testAPasswordOverIdentitysByteLimitIsTooLongAndNeverReachesIdentity() throws {
        requestNow("alice@example.com")
        let token = try lastToken()
        XCTAssertThrowsError(try service.complete(token: token, password: String(repeating: "é", count: 513), context: context())) { error in
            XCTAssertEqual((error as? ResetError)?.rpcError.reason, .weakPassword)
            XCTAssertEqual((error as? ResetError)?.rpcError.data?["rule"], "too_long")
        }
        XCTAssertEqual(identity.callCount("identity.check_password"), 0)
        XCTAssertNoThrow(try service.validate(token: token))
    }
}
