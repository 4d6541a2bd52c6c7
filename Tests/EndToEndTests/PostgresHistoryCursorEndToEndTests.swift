import Foundation
import LineProtocol
import XCTest

/// History cursors are sealed under the accounts key, which every replica on PostgreSQL shares:
/// a cursor one replica issued pages on the others, and the pages add up to the whole history.
final class PostgresHistoryCursorEndToEndTests: PostgresStackTestCase {
    func testACursorFromOneAccountsReplicaPagesOnTheOthers() throws {
        let gateway = try gateway()
        let (username, password, phone) = ("pager", "correct horse battery staple", "+15555557001")
        let registered = try gateway.result("identity.register", [
            "username": .string(username), "password": .string(password), "email": "pager@example.com", "phone": .string(phone),
        ])
        let userID = try XCTUnwrap(registered["user_id"]?.stringValue)
        try provePhone(userID: userID, phone: phone)
        let replicas = try (0..<3).map { try direct("accounts", replica: $0) }
        for index in 0..<6 {
            _ = try replicas[index % 3].result("accounts.deposit", [
                "user_id": .string(userID), "account": "checking", "amount": .int(Int64(100 + index)), "idempotency_key": .string("fund-\(index)"),
            ])
        }
        let login = try gateway.result("identity.login", ["username": .string(username), "password": .string(password), "device_id": "phone"])
        let session = try XCTUnwrap(login["session"]?.stringValue)
        _ = try passSMSFactor(gateway, session: session)

        let whole = try XCTUnwrap(try replicas[0].result("accounts.history", ["session": .string(session), "limit": 100])["entries"]?.arrayValue)
        XCTAssertEqual(whole.count, 6)
        var pages: [JSON] = []
        var before: JSON = .null
        for page in 0..<whole.count {
            let answer = try replicas[page % 3].result("accounts.history", ["session": .string(session), "limit": 1, "before": before])
            pages += answer["entries"]?.arrayValue ?? []
            before = answer["next"] ?? .null
            if before == .null { break }
        }
        XCTAssertEqual(pages, whole, "each page read on the next replica, with the cursor the one before issued")
    }
}
