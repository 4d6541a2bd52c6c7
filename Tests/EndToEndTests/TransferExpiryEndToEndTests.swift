import Foundation
import LineProtocol
import RPC
import StackLauncher
import XCTest

/// A transfer's SMS code lives as long as the transfer (`--transfer-expiry-s`), so accounts
/// takes only the code lives verification takes (30-600 s): any other value stops the process
/// at start, naming the option and the range, instead of failing every SMS transfer later.
final class TransferExpiryEndToEndTests: StackTestCase {
    override func stackOptions(_ options: inout Stack.Options) {
        options.serviceEnvironment["accounts"] = ["LATCHKEY_TRANSFER_EXPIRY_S": "600"]
    }

    func testAccountsRefusesToStartWithAnExpiryNoCodeCanHave() throws {
        for value in ["29", "601", "86400"] {
            var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LATCHKEY_") }
            environment["LATCHKEY_DATA_DIR"] = dataDirectory + "/refused-\(value)"
            let run = try ChildProcess(
                directory: dataDirectory, executable: "accounts",
                arguments: ["--listen", "127.0.0.1:0", "--transfer-expiry-s", value], environment: environment)
            XCTAssertEqual(run.waitForExit(timeoutSeconds: 20), 2, "\(value): \(run.standardError)")
            XCTAssertTrue(run.standardError.contains("--transfer-expiry-s must be 30-600"), "\(value): \(run.standardError)")
        }
    }

    func testAnSMSTransferWorksAtTheLongestExpiry() throws {
        let gateway = try gateway()
        let user = try gateway.result("identity.register", [
            "username": "hale", "password": "correct horse battery", "email": "hale@example.com", "phone": "+15555550142",
        ])
        let session = try XCTUnwrap(try gateway.result("identity.login", [
            "username": "hale", "password": "correct horse battery", "device_id": "iphone-1",
        ])["session"])
        try passLoginFactor(gateway, session: session)
        _ = try direct("accounts").result("accounts.deposit", [
            "user_id": try XCTUnwrap(user["user_id"]), "account": "checking", "amount": 10_000, "idempotency_key": "d-1",
        ])
        let ticket = try gateway.result("accounts.transfer", [
            "session": session, "from": "checking", "to": "saving", "amount": 2_500, "idempotency_key": "t-1",
        ])
        let requestID = try XCTUnwrap(ticket["request_id"]?.stringValue)
        let status = try direct("verification").result("verification.status", ["request_id": .string(requestID)])
        let lifetime = (status["code_expires_at"]?.intValue ?? 0) - (status["created_at"]?.intValue ?? 0)
        XCTAssertEqual(lifetime, 600, "the code lives as long as the transfer")
        let done = try gateway.result("accounts.confirm", [
            "session": session, "transfer_id": try XCTUnwrap(ticket["transfer_id"]), "code": .string(try code(for: requestID)),
        ])
        XCTAssertEqual(done["status"], "done")
    }
}
