import Foundation
import LineProtocol
import Platform
import RPC
import StackLauncher
import TestSupport
import XCTest

/// The confirmed-transfer flow with verification killed (-9) mid-storm: its delivery claims and
/// outcomes, and accounts' reservations, commit without waiting for the disk, so this attacks
/// what those writes must still guarantee with the real executables: every transfer that was
/// answered gets its code (the message is sent, again after the restart if need be), every
/// confirm answered `done` is booked exactly once, and money is conserved.
final class TransferFlowCrashEndToEndTests: StackTestCase {
    override func stackOptions(_ options: inout Stack.Options) {
        // Many users from one address: lift the per-client budgets the storm would trip.
        options.serviceEnvironment["gateway"] = ["LATCHKEY_RATE_LIMITS": "auth=0:1,codes=0:1,reset=0:1,default=0:1"]
        for limit in ["PER_NUMBER_10M", "PER_NUMBER_DAY", "PER_USER_10M", "PER_USER_DAY", "PER_CLIENT_10M", "PER_CLIENT_DAY", "GLOBAL_HOUR", "GLOBAL_DAY"] {
            options.environment["LATCHKEY_VERIFICATION_SENDS_\(limit)"] = "1000000"
        }
    }

    private func customer(_ index: Int) throws -> String {
        let client = try gateway()
        let name = "crash\(index)u\(UInt16.random(in: 0...UInt16.max))"
        let password = "crash passphrase \(index) plum"
        let phone = String(format: "+1555%03d%04d", 400 + index, index)
        let registered = try client.result("identity.register", [
            "username": .string(name), "password": .string(password), "email": .string("\(name)@example.com"), "phone": .string(phone),
        ])
        let userID = try XCTUnwrap(registered["user_id"]?.stringValue)
        try provePhone(userID: userID, phone: phone)
        _ = try direct("accounts").result("accounts.deposit", [
            "user_id": .string(userID), "account": "checking", "amount": 1_000_000, "idempotency_key": .string("fund-\(name)"),
        ])
        let login = try client.result("identity.login", ["username": .string(name), "password": .string(password), "device_id": "phone"])
        let session = try XCTUnwrap(login["session"])
        try passLoginFactor(client, session: session)
        return try XCTUnwrap(session.stringValue)
    }

    func testKillNineOfVerificationMidStormLosesNoAnsweredCodeAndBooksEachConfirmOnce() throws {
        let sessions = try (0..<6).map { try customer($0) }
        let answered = SharedList<String>()  // request ids of transfers answered with their code's request
        let acknowledged = SharedList<String>()  // transfer ids whose confirm answered `done`
        let stopAt = Date().addingTimeInterval(3)
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
                    // Every step may fail while verification is down: the storm goes on regardless.
                    guard let client = try? LineClient(gatewayEndpoint),
                        let ticket = try? client.result("accounts.transfer", [
                            "session": .string(session), "from": "checking", "to": "saving", "amount": 100,
                            "idempotency_key": .string("crash-\(iteration)"),
                        ]),
                        let transferID = ticket["transfer_id"]?.stringValue, let requestID = ticket["request_id"]?.stringValue
                    else { usleep(20_000); continue }
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
        waitUntil("the storm confirms a transfer before the kill", timeoutSeconds: 30) { !acknowledged.isEmpty }
        stack.kill("verification")
        usleep(300_000)  // a window of downtime the storm runs into (the fault under test), not synchronisation
        try stack.restart("verification")
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)

        // Every answered transfer's message goes out, if need be after the restart.
        let delivered = Set(outbox().compactMap { $0["request_id"]?.stringValue })
        let missing = answered.all.filter { !delivered.contains($0) }
        for requestID in missing { _ = try code(for: requestID, timeoutSeconds: 20) }
        XCTAssertFalse(answered.all.isEmpty)
        XCTAssertFalse(acknowledged.all.isEmpty, "the storm confirmed transfers")

        let audit = try direct("accounts").result("accounts.audit")
        XCTAssertEqual(audit["ok"], true, "audit after kill -9: \(audit.text)")
        var booked: [String: Int] = [:]
        for session in sessions {
            var cursor: JSON = .null
            repeat {
                var params: [String: JSON] = ["session": .string(session), "limit": 100]
                if cursor != .null { params["before"] = cursor }
                let page = try gateway().result("accounts.history", .object(params))
                for entry in page["entries"]?.arrayValue ?? [] {
                    if let transferID = entry["transfer_id"]?.stringValue, !transferID.hasPrefix("dp_") { booked[transferID, default: 0] += 1 }
                }
                cursor = page["next"] ?? .null
            } while cursor != .null
            let balances = try gateway().result("accounts.balances", ["session": .string(session)])
            let total = (balances["accounts"]?.arrayValue ?? []).compactMap { $0["balance"]?.intValue }.reduce(0, +)
            XCTAssertEqual(total, 1_000_000, "money is conserved across both accounts")
        }
        for transferID in acknowledged.all {
            XCTAssertEqual(booked[transferID], 2, "acknowledged \(transferID) is booked exactly once (one row per account)")
        }
        XCTAssertTrue(booked.values.allSatisfy { $0 == 2 }, "no transfer is booked twice or half: \(booked.filter { $0.value != 2 })")
    }
}
