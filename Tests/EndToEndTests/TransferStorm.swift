import Foundation
import LineProtocol
import RPC
import TestSupport
import XCTest

extension StackTestCase {
    /// What a transfer storm saw: request ids answered with their code's request, and transfer ids
    /// whose confirm answered `done`.
    struct TransferStormOutcome {
        let answered: [String]
        let acknowledged: [String]
    }

    /// One thread per session moves 100 from checking to saving and confirms it by its SMS code,
    /// back to back for `seconds`, each step allowed to fail (a service dies meanwhile). Once the
    /// storm has confirmed a transfer, `fault` runs (a kill -9 and a restart); then the storm ends.
    func runTransferStorm(sessions: [String], keyPrefix: String, seconds: Double = 3, fault: () throws -> Void) throws -> TransferStormOutcome {
        let answered = SharedList<String>()
        let acknowledged = SharedList<String>()
        let stopAt = Date().addingTimeInterval(seconds)
        let gatewayEndpoint = stack.gateway
        let outboxPath = stack.outboxPath
        let group = DispatchGroup()
        for session in sessions {
            group.enter()
            Thread {
                defer { group.leave() }
                var iteration = 0
                while Date() < stopAt {
                    iteration += 1
                    guard let client = try? LineClient(gatewayEndpoint),
                        let ticket = try? client.result("accounts.transfer", [
                            "session": .string(session), "from": "checking", "to": "saving", "amount": 100,
                            "idempotency_key": .string("\(keyPrefix)-\(iteration)"),
                        ]),
                        let transferID = ticket["transfer_id"]?.stringValue, let requestID = ticket["request_id"]?.stringValue
                    else {
                        usleep(20_000)  // the service is down: the storm goes on, a little later
                        continue
                    }
                    answered.append(requestID)
                    guard let code = try? Self.code(outboxPath: outboxPath, for: requestID, timeoutSeconds: 2),
                        let done = try? client.result("accounts.confirm", [
                            "session": .string(session), "transfer_id": .string(transferID), "code": .string(code),
                        ])
                    else { continue }
                    if done["status"] == "done" { acknowledged.append(transferID) }
                }
            }.start()
        }
        waitUntil("the storm confirms a transfer before the fault", timeoutSeconds: 30) { !acknowledged.isEmpty }
        try fault()
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success, "the storm ends")
        XCTAssertFalse(acknowledged.all.isEmpty, "the storm confirmed transfers")
        return TransferStormOutcome(answered: answered.all, acknowledged: acknowledged.all)
    }

    /// After a storm: the ledger audits clean, each session's money is conserved across its two
    /// accounts, every acknowledged transfer is booked exactly once and no transfer twice or half.
    func assertLedgerConsistent(sessions: [String], acknowledged: [String], balance: Int64, file: StaticString = #filePath, line: UInt = #line) throws {
        let audit = try direct("accounts").result("accounts.audit")
        XCTAssertEqual(audit["ok"], true, "audit after kill -9: \(audit.text)", file: file, line: line)
        var booked: [String: Int] = [:]
        for session in sessions {
            var cursor: JSON = .null
            repeat {
                var params: [String: JSON] = ["session": .string(session), "limit": 100]
                if cursor != .null { params["before"] = cursor }
                let page = try gateway().result("accounts.history", .object(params))
                for entry in page["entries"]?.arrayValue ?? [] {
                    // Deposits (`dp_`) book one row on the user's side; transfers book one per account.
                    if let transferID = entry["transfer_id"]?.stringValue, !transferID.hasPrefix("dp_") { booked[transferID, default: 0] += 1 }
                }
                cursor = page["next"] ?? .null
            } while cursor != .null
            let balances = try gateway().result("accounts.balances", ["session": .string(session)])
            let total = (balances["accounts"]?.arrayValue ?? []).compactMap { $0["balance"]?.intValue }.reduce(0, +)
            XCTAssertEqual(total, balance, "money is conserved across both accounts", file: file, line: line)
        }
        for transferID in acknowledged {
            XCTAssertEqual(booked[transferID], 2, "acknowledged \(transferID) is booked exactly once (one row per account)", file: file, line: line)
        }
        XCTAssertTrue(booked.values.allSatisfy { $0 == 2 }, "no transfer is booked twice or half: \(booked.filter { $0.value != 2 })", file: file, line: line)
    }
}
