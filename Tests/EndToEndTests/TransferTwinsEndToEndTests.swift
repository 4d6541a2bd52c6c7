import Foundation
import LineProtocol
import RPC
import StackLauncher
import TestSupport
import XCTest

/// Transfer twins with every real process behind the gateway: 20 `accounts.transfer` twins (same
/// idempotency key) at once, each on its own connection. Every twin answers the one transfer,
/// one code is sent, and confirming it books the money once.
final class TransferTwinsEndToEndTests: StackTestCase {
    override func stackOptions(_ options: inout Stack.Options) {
        options.serviceEnvironment["gateway"] = ["LATCHKEY_RATE_LIMITS": "auth=0:1,codes=0:1,reset=0:1,default=0:1"]
    }

    func testTwentyTwinTransfersAnswerTheOneTransferAndBookOnce() throws {
        let gateway = try gateway()
        let phone = "+15555550188"
        let registered = try gateway.result("identity.register", [
            "username": "twins", "password": "twin requests passphrase 9", "email": "twins@example.com", "phone": .string(phone),
        ])
        let userID = try XCTUnwrap(registered["user_id"]?.stringValue)
        try provePhone(userID: userID, phone: phone)
        _ = try direct("accounts").result("accounts.deposit", [
            "user_id": .string(userID), "account": "checking", "amount": 100_000, "idempotency_key": "fund-twins",
        ])
        let login = try gateway.result("identity.login", ["username": "twins", "password": "twin requests passphrase 9", "device_id": "phone"])
        let session = try XCTUnwrap(login["session"]?.stringValue)
        try passSMSFactor(gateway, session: session)

        let endpoint = stack.gateway
        let answers = SharedList<String>()
        let gate = DispatchSemaphore(value: 0)
        let finished = DispatchGroup()
        let params: JSON = ["session": .string(session), "from": "checking", "to": "saving", "amount": 4_200, "idempotency_key": "twin-key"]
        for _ in 0..<20 {
            finished.enter()
            Thread {
                let client = try? LineClient(endpoint)
                gate.wait()
                switch (try? client?.call("accounts.transfer", params))??.outcome {
                case .success(let ticket)?:
                    answers.append("\(ticket["transfer_id"]?.stringValue ?? "?") \(ticket["status"]?.stringValue ?? "?") \(ticket["request_id"]?.stringValue ?? "?")")
                case .failure(let error)?: answers.append("error \(error.reasonText ?? "") \(error.message)")
                case nil: answers.append("no answer")
                }
                finished.leave()
            }.start()
        }
        for _ in 0..<20 { gate.signal() }
        XCTAssertEqual(finished.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(answers.all.count, 20)
        XCTAssertEqual(Set(answers.all).count, 1, "every twin answers the same transfer, status and code: \(answers.all)")
        let parts = (answers.all.first ?? "").split(separator: " ").map(String.init)
        guard parts.count == 3, parts[1] == "pending" else { return XCTFail("not a pending transfer: \(parts)") }
        let (transferID, requestID) = (parts[0], parts[2])
        // Messages are sent after the answer: wait for the code's message before counting them.
        let smsCode = try code(for: requestID)
        XCTAssertEqual(outbox().filter { $0["request_id"]?.stringValue?.hasPrefix("vr_") == true && $0["text"]?.stringValue?.contains("42.00") == true }.count, 1,
                       "one code for the one transfer")

        let done = try gateway.result("accounts.confirm", [
            "session": .string(session), "transfer_id": .string(transferID), "code": .string(smsCode),
        ])
        XCTAssertEqual(done["status"], "done")
        let history = try gateway.result("accounts.history", ["session": .string(session), "limit": 100])
        XCTAssertEqual(history["entries"]?.arrayValue?.filter { $0["transfer_id"]?.stringValue == transferID }.count, 2, "booked once")
        let balances = try gateway.result("accounts.balances", ["session": .string(session)])
        XCTAssertEqual(balances["accounts"]?.arrayValue?.map { $0["balance"] }, [95_800, 4_200])
        XCTAssertEqual(try direct("accounts").result("accounts.audit"), ["ok": true, "breaches": []])
    }
}
