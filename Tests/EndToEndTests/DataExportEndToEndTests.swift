import Foundation
import LineProtocol
import RPC
import TestSupport
import XCTest

/// `identity.export` through the gateway: identity's part with every other service's added
/// under its name, whole or not at all (a service down fails it, retry-safe).
final class DataExportEndToEndTests: StackTestCase {
    static let password = "correct horse battery"

    func testTheGatewayAddsEveryServicesPartOrGivesNoneWhenOneIsDown() throws {
        let gateway = try gateway()
        let userID = try XCTUnwrap(try gateway.result("identity.register", [
            "username": "alice", "password": .string(Self.password), "email": "alice@example.com", "phone": "+15555550100",
        ])["user_id"])
        _ = try direct("accounts").result("accounts.deposit", ["user_id": userID, "account": "checking", "amount": 900, "idempotency_key": "fund"])
        let login = try appLogin(gateway, "alice", password: Self.password, device: "iphone-1")
        let session = try XCTUnwrap(login["session"])
        let started = try gateway.result("verification.start", ["session": session])
        _ = try gateway.result("verification.check", [
            "session": session, "request_id": try XCTUnwrap(started["request_id"]), "code": .string(try code(for: try XCTUnwrap(started["request_id"]?.stringValue))),
        ])

        let document = try gateway.result("identity.export", ["session": session])
        XCTAssertEqual(document["user_id"], userID)
        XCTAssertEqual(document["accounts"]?["balances"]?.arrayValue?.map { $0["balance"] }, [900, 0])
        XCTAssertEqual(document["accounts"]?["entries"]?.arrayValue?.count, 1, "the deposit")
        XCTAssertEqual(document["verification"]?["requests"]?.arrayValue?.first?["status"], "verified")
        XCTAssertNotNil(document["reset"]?["links"]?.arrayValue)

        stack.kill("verification")
        let refused = assertError(try gateway.call("identity.export", ["session": session]), "unavailable")
        XCTAssertTrue(refused?.message.contains("verification") ?? false, "\(String(describing: refused))")
        try stack.restart("verification")
        XCTAssertTrue(eventually(timeoutSeconds: 20) { (try? gateway.result("identity.export", ["session": session]))?["verification"] != nil })
    }
}
