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
        let storm = try runTransferStorm(sessions: sessions, keyPrefix: "crash") {
            stack.kill("verification")
            usleep(300_000)  // a window of downtime the storm runs into (the fault under test), not synchronisation
            try stack.restart("verification")
        }
        // Every answered transfer's message goes out, if need be after the restart.
        let delivered = Set(outbox().compactMap { $0["request_id"]?.stringValue })
        for requestID in storm.answered where !delivered.contains(requestID) { _ = try code(for: requestID, timeoutSeconds: 20) }
        XCTAssertFalse(storm.answered.isEmpty)
        try assertLedgerConsistent(sessions: sessions, acknowledged: storm.acknowledged, balance: 1_000_000)
    }
}
