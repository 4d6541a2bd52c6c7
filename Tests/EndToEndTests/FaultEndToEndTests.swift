import Foundation
import LineProtocol
import Platform
import RPC
import StackLauncher
import TestSupport
import XCTest

/// Crashes and faults with the real executables: a `kill -9` in the middle of a transfer
/// storm, SIGTERM under load, a disk that fills up. Bounded in time: each storm lasts seconds.
final class FaultEndToEndTests: StackTestCase {
    override func stackOptions(_ options: inout Stack.Options) {
        // Many users from one address: lift the per-client budgets the storm would trip.
        options.serviceEnvironment["gateway"] = ["LATCHKEY_RATE_LIMITS": "auth=0:1,codes=0:1,reset=0:1,default=0:1"]
        for limit in ["PER_CLIENT_10M", "PER_CLIENT_DAY", "GLOBAL_HOUR", "GLOBAL_DAY"] {
            options.environment["LATCHKEY_VERIFICATION_SENDS_\(limit)"] = "1000000"
        }
        if name.contains("FullDisk") && !Self.underThreadSanitizer { options.fileSizeLimitKilobytes["accounts"] = 160 }
    }

    /// ThreadSanitizer's runtime dies of SIGBUS under a file-size limit (its own shadow mapping).
    private static var underThreadSanitizer: Bool { ProcessInfo.processInfo.environment["LATCHKEY_SANITIZER"] == "thread" }

    private struct Customer {
        let userID: String
        let session: String
    }

    /// A registered, logged-in user with `amount` in checking.
    private func customer(_ index: Int, amount: Int64) throws -> Customer {
        let client = try gateway()
        let name = "storm\(index)u\(UInt16.random(in: 0...UInt16.max))"
        let password = "storm passphrase \(index) kiwi"
        let registered = try client.result("identity.register", [
            "username": .string(name), "password": .string(password), "email": .string("\(name)@example.com"),
            "phone": .string(String(format: "+1555%03d%04d", 300 + index, index)),
        ])
        let userID = try XCTUnwrap(registered["user_id"]?.stringValue)
        try provePhone(userID: userID, phone: String(format: "+1555%03d%04d", 300 + index, index))
        _ = try direct("accounts").result("accounts.deposit", [
            "user_id": .string(userID), "account": "checking", "amount": .int(amount), "idempotency_key": .string("fund-\(name)"),
        ])
        let login = try client.result("identity.login", ["username": .string(name), "password": .string(password), "device_id": "phone"])
        let session = try XCTUnwrap(login["session"])
        try passLoginFactor(client, session: session)
        return Customer(userID: userID, session: try XCTUnwrap(session.stringValue))
    }

    func testKillNineOfAccountsDuringATransferStormLosesNothingAcknowledgedAndAppliesNothingTwice() throws {
        let customers = try (0..<6).map { try customer($0, amount: 1_000_000) }
        let storm = try runTransferStorm(sessions: customers.map(\.session), keyPrefix: "storm") {
            stack.kill("accounts")
            usleep(300_000)  // a window of downtime the storm runs into (the fault under test), not synchronisation
            try stack.restart("accounts")
        }
        try assertLedgerConsistent(sessions: customers.map(\.session), acknowledged: storm.acknowledged, balance: 1_000_000)
    }

    func testSigtermUnderLoadFinishesInflightRequestsAndExitsZero() throws {
        let user = try customer(0, amount: 10_000)
        let loads: [(service: String, method: String, params: JSON)] = [
            ("accounts", "accounts.balances", ["session": .string(user.session)]),
            ("verification", "verification.status", ["request_id": "vr_verification_unknown"]),
            ("reset", "reset.request", ["email": "nobody@example.com"]),
            ("identity", "identity.introspect", ["session": .string(user.session)]),
        ]
        for load in loads {
            let endpoint = stack.endpoint(load.service)
            let answers = SharedList<String>()
            let bad = SharedList<String>()
            let group = DispatchGroup()
            for _ in 0..<4 {
                group.enter()
                Thread {
                    defer { group.leave() }
                    guard let client = try? LineClient(endpoint) else { return }
                    // Pipeline a burst so requests are in flight when the signal lands.
                    let burst = (0..<32).map { RPCRequest(method: load.method, params: load.params, id: .int(Int64($0))).encoded() + [10] }
                    try? client.sendRaw(burst.flatMap { $0 })
                    while let line = try? client.readLine() {
                        guard let json = try? JSONParser.parse(line), let response = RPCResponse.decode(json) else {
                            bad.append("unreadable answer")
                            continue
                        }
                        if case .failure(let error) = response.outcome, error.reason == .`internal` || error.reason == .timeout {
                            bad.append("\(load.service): \(error.reasonText ?? "?")")
                        }
                        answers.append("\(response.id)")
                    }
                }.start()
            }
            usleep(20_000)
            let status = stack.terminate(load.service)
            group.wait()
            XCTAssertEqual(status, 0, "\(load.service) exits 0 after draining")
            XCTAssertEqual(bad.all, [], "\(load.service): in-flight requests finish cleanly")
            XCTAssertEqual(answers.all.count, 4 * 32, "\(load.service): every request it had read was answered")
            XCTAssertTrue(stack.member(load.service).log.contains("\"msg\":\"stopped\""))
        }
    }

    func testFullDiskGivesClearErrorsAndLosesNothingAcknowledged() throws {
        // ThreadSanitizer's runtime dies of SIGBUS under a file-size limit (its own shadow
        // mapping), before the service runs: the plain and AddressSanitizer runs cover this.
        try XCTSkipIf(Self.underThreadSanitizer, "file-size limits break the TSan runtime")
        let accounts = try direct("accounts")
        var acknowledged: [String: Int64] = [:]
        var refusal: RPCError?
        // Fund fresh users until the 160 KiB file-size limit stops the writes.
        for index in 0..<5000 where refusal == nil {
            let userID = "full-disk-user-\(index)"
            let response = try accounts.call("accounts.deposit", [
                "user_id": .string(userID), "account": "checking", "amount": 1000, "idempotency_key": .string("deposit-\(index)"),
            ])
            switch response.outcome {
            case .success: acknowledged[userID] = 1000
            case .failure(let error): refusal = error
            }
        }
        let error = try XCTUnwrap(refusal, "the limit was reached")
        XCTAssertEqual(error.reason, .unavailable, "a full disk is an operator problem, said plainly: \(error.message)")
        XCTAssertTrue(error.message.contains("storage"), error.message)
        XCTAssertEqual(try accounts.result("accounts.ping"), ["pong": true], "the service stays up")

        // Room again: restart without the limit; everything acknowledged is there, nothing is corrupt.
        stack.kill("accounts", signal: SIGTERM)
        try stack.restart("accounts")
        let after = try direct("accounts")
        XCTAssertEqual(try after.result("accounts.audit")["ok"], true)
        for (userID, amount) in acknowledged.prefix(50) {
            let again = try after.result("accounts.deposit", [
                "user_id": .string(userID), "account": "checking", "amount": .int(amount), "idempotency_key": .string("deposit-\(userID.split(separator: "-").last!)"),
            ])
            XCTAssertEqual(again["balance"]?.intValue, amount, "an idempotent replay finds \(userID)'s deposit once")
        }
    }
}
