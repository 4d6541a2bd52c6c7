import Foundation
import LineProtocol
import Platform
import RPC
import TestSupport
import XCTest

final class AccountsEndToEndTests: XCTestCase {
    var fakes: FakeUpstreams!
    var accounts: AccountsProcessUnderTest!
    var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "accounts-e2e-\(UUID().uuidString)"
        fakes = try FakeUpstreams()
        accounts = AccountsProcessUnderTest(dataDirectory: directory, upstream: fakes.endpoint)
        try accounts.start()
    }

    override func tearDownWithError() throws {
        accounts?.kill()
        fakes?.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func error(of response: RPCResponse) -> RPCError? {
        if case .failure(let error) = response.outcome { return error }
        return nil
    }

    func testTransferFlowOverTCP() throws {
        let client = try LineClient(accounts.endpoint)
        XCTAssertEqual(try client.result("accounts.deposit", [
            "user_id": "alice", "account": "checking", "amount": 500_000, "idempotency_key": "demo-checking",
        ])["balance"], 500_000)
        XCTAssertEqual(error(of: try client.call("accounts.balances", [:]))?.reason, .unauthenticated)
        XCTAssertEqual(error(of: try client.call("accounts.balances", ["session": "nope"]))?.reason, .unauthenticated)

        let balances = try client.result("accounts.balances", ["session": "lks_alice"])
        XCTAssertEqual(balances["accounts"], [
            ["name": "checking", "balance": 500_000, "currency": "USD"],
            ["name": "saving", "balance": 0, "currency": "USD"],
        ])

        let bad = try client.call("accounts.transfer", [
            "session": "lks_alice", "from": "checking", "to": "checking", "amount": 5, "idempotency_key": "k0",
        ])
        XCTAssertEqual(error(of: bad)?.reason, .invalidParams)
        let fractional = try client.call("accounts.transfer", [
            "session": "lks_alice", "from": "checking", "to": "saving", "amount": 1.5, "idempotency_key": "k0",
        ])
        XCTAssertEqual(error(of: fractional)?.data?["field"], "amount")
        let unknownAccount = try client.call("accounts.transfer", [
            "session": "lks_alice", "from": "brokerage", "to": "saving", "amount": 5, "idempotency_key": "k0",
        ])
        XCTAssertEqual(error(of: unknownAccount)?.data?["field"], "from")
        let missingKey = try client.call("accounts.transfer", ["session": "lks_alice", "from": "checking", "to": "saving", "amount": 5])
        XCTAssertEqual(error(of: missingKey)?.data?["field"], "idempotency_key")

        let ticket = try client.result("accounts.transfer", [
            "session": "lks_alice", "from": "checking", "to": "saving", "amount": 500_000, "idempotency_key": "k1",
        ])
        XCTAssertEqual(ticket["status"], "pending")
        let transferID = try XCTUnwrap(ticket["transfer_id"]?.stringValue)
        let requestID = try XCTUnwrap(ticket["request_id"]?.stringValue)
        XCTAssertTrue(requestID.hasPrefix("vr_fakevr_"))
        let sent = try XCTUnwrap(fakes.code(requestID))
        XCTAssertEqual(sent.payload["amount"], 500_000)
        XCTAssertEqual(sent.payload["transfer_id"], .string(transferID))

        let wrong = try client.call("accounts.confirm", ["session": "lks_alice", "transfer_id": .string(transferID), "code": "000000"])
        XCTAssertEqual(error(of: wrong)?.reason, .invalidCode)
        XCTAssertEqual(error(of: wrong)?.data?["attempts_left"], 2)
        let stranger = try client.call("accounts.confirm", [
            "session": "lks_mallory", "transfer_id": .string(transferID), "code": .string(sent.code),
        ])
        XCTAssertEqual(error(of: stranger)?.reason, .notFound)

        let done = try client.result("accounts.confirm", [
            "session": "lks_alice", "transfer_id": .string(transferID), "code": .string(sent.code),
        ])
        XCTAssertEqual(done["status"], "done")
        XCTAssertEqual(done["accounts"]?.arrayValue?.map { $0["balance"] }, [0, 500_000])

        let history = try client.result("accounts.history", ["session": "lks_alice", "limit": 2])
        let entries = try XCTUnwrap(history["entries"]?.arrayValue)
        XCTAssertEqual(entries.map { $0["direction"] }, ["credit", "debit"])
        XCTAssertEqual(entries.map { $0["transfer_id"] }, [.string(transferID), .string(transferID)])
        let older = try client.result("accounts.history", ["session": "lks_alice", "before": try XCTUnwrap(history["next"])])
        XCTAssertEqual(older["entries"]?.arrayValue?.map { $0["counterpart"] }, ["external"])
        XCTAssertEqual(older["next"], .null)

        XCTAssertEqual(try client.result("accounts.audit", [:]), ["ok": true, "breaches": []])
        let counters = try client.result("accounts.metrics", [:])["counters"]
        XCTAssertEqual(counters?["transfers.created"], 1)
        XCTAssertEqual(counters?["confirms.done"], 1)
        XCTAssertNotNil(try client.result("accounts.health", [:])["checks"]?["ledger"]?["writes"])
        XCTAssertEqual(accounts.terminate(), 0)
    }

    /// Many connections transfer and confirm; `kill -9` lands mid-storm; after a restart on the
    /// same address and data the ledger is intact: audit clean, every acknowledged confirm
    /// booked exactly once, and confirms cut short by the kill complete on retry.
    func testKillNineMidStormLosesNothingAcknowledgedAndAppliesNothingTwice() throws {
        try killNineMidStorm()
    }

    func testKillNineMidStormWithOneCommitPerWrite() throws {
        accounts.kill()
        accounts = AccountsProcessUnderTest(
            dataDirectory: directory + "-single", upstream: fakes.endpoint, extraArguments: ["--group-commit-max", "1"])
        defer { try? FileManager.default.removeItem(atPath: directory + "-single") }
        try accounts.start()
        try killNineMidStorm()
    }

    private func killNineMidStorm() throws {
        let users = (0..<8).map { "storm-\($0)" }
        let admin = try LineClient(accounts.endpoint)
        for user in users {
            for account in ["checking", "saving"] {
                _ = try admin.result("accounts.deposit", [
                    "user_id": .string(user), "account": .string(account), "amount": 1_000_000,
                    "idempotency_key": .string("seed-\(account)"),
                ])
            }
        }
        let record = StormRecord()
        let endpoint = accounts.endpoint
        let fakes = self.fakes!
        let group = DispatchGroup()
        let started = Date()
        for worker in 0..<16 {
            group.enter()
            Thread {
                defer { group.leave() }
                Self.storm(worker: worker, user: users[worker % users.count], endpoint: endpoint, fakes: fakes, record: record)
            }.start()
        }
        waitUntil("the storm confirms transfers before the kill", timeoutSeconds: 30) { record.acknowledged.count >= 200 }
        accounts.kill(SIGKILL)
        let elapsed = Date().timeIntervalSince(started)
        record.stop()
        XCTAssertEqual(group.wait(timeout: .now() + 30), .success)
        let acknowledged = record.acknowledged
        let created = record.created
        print("storm: \(acknowledged.count) confirmed (\(created.count - acknowledged.count) cut short) in \(String(format: "%.2f", elapsed)) s before kill -9 "
            + "(\(Int(Double(acknowledged.count) / elapsed)) confirmed transfers/s over TCP, 16 connections)")
        XCTAssertGreaterThan(acknowledged.count, 10)
        XCTAssertEqual(record.duplicates, [], "a retried transfer request made a second transfer")

        try accounts.start()
        let client = try LineClient(accounts.endpoint)
        XCTAssertEqual(try client.result("accounts.audit", [:]), ["ok": true, "breaches": []])
        var legs = try ledgerLegs(client, users: users)
        for transferID in acknowledged { XCTAssertEqual(legs[transferID], 2, "acknowledged \(transferID) not booked once") }
        XCTAssertTrue(legs.values.allSatisfy { $0 == 2 }, "a transfer booked twice or half")

        // Confirms the kill cut short complete on retry, whatever instant they were cut at.
        for (transferID, ticket) in created where !acknowledged.contains(transferID) {
            let answer = try client.call("accounts.confirm", [
                "session": .string("lks_\(ticket.user)"), "transfer_id": .string(transferID), "code": .string(ticket.code),
            ])
            XCTAssertEqual(try answer.outcome.get()["status"], "done", "retry of \(transferID)")
        }
        legs = try ledgerLegs(client, users: users)
        for transferID in created.keys { XCTAssertEqual(legs[transferID], 2) }
        for user in users {
            let balances = try client.result("accounts.balances", ["session": .string("lks_\(user)")])
            let total = balances["accounts"]?.arrayValue?.compactMap { $0["balance"]?.intValue }.reduce(0, +)
            XCTAssertEqual(total, 2_000_000, "money of \(user) not conserved")
        }
        XCTAssertEqual(try client.result("accounts.audit", [:]), ["ok": true, "breaches": []])
        XCTAssertEqual(accounts.terminate(), 0)
    }

    private static func storm(worker: Int, user: String, endpoint: Endpoint, fakes: FakeUpstreams, record: StormRecord) {
        guard let client = try? LineClient(endpoint) else { return }
        var round = 0
        while !record.stopped {
            round += 1
            let forward = round % 2 == 0
            do {
                let ticket = try client.result("accounts.transfer", [
                    "session": .string("lks_\(user)"), "from": forward ? "checking" : "saving", "to": forward ? "saving" : "checking",
                    "amount": .int(Int64(1 + (worker * 7 + round) % 97)), "idempotency_key": .string("w\(worker)-r\(round)"),
                ])
                guard let transferID = ticket["transfer_id"]?.stringValue, let requestID = ticket["request_id"]?.stringValue,
                    let code = fakes.code(requestID)?.code
                else { return }
                record.created(transferID, user: user, code: code)
                if round % 5 == 0 {  // a retry of the same request answers the same transfer
                    let again = try client.result("accounts.transfer", [
                        "session": .string("lks_\(user)"), "from": forward ? "checking" : "saving", "to": forward ? "saving" : "checking",
                        "amount": .int(Int64(1 + (worker * 7 + round) % 97)), "idempotency_key": .string("w\(worker)-r\(round)"),
                    ])
                    if again["transfer_id"]?.stringValue != transferID { record.duplicate(transferID) }
                }
                let done = try client.result("accounts.confirm", [
                    "session": .string("lks_\(user)"), "transfer_id": .string(transferID), "code": .string(code),
                ])
                if done["status"] == "done" { record.acknowledge(transferID) }
            } catch {
                return  // the connection died with the process
            }
        }
    }

    /// How many ledger rows each transfer has across the users' histories (all pages).
    private func ledgerLegs(_ client: LineClient, users: [String]) throws -> [String: Int] {
        var legs: [String: Int] = [:]
        for user in users {
            var before: JSON = .null
            for _ in 0..<10_000 {
                let page = try client.result("accounts.history", ["session": .string("lks_\(user)"), "limit": 100, "before": before])
                for entry in page["entries"]?.arrayValue ?? [] {
                    if let id = entry["transfer_id"]?.stringValue, id.hasPrefix("tr_") { legs[id, default: 0] += 1 }
                }
                before = page["next"] ?? .null
                if before == .null { break }
            }
        }
        return legs
    }
}

final class StormRecord: @unchecked Sendable {
    struct Ticket {
        let user: String
        let code: String
    }

    private let lock = NSLock()
    private var createdTickets: [String: Ticket] = [:]
    private var acknowledgedIDs: Set<String> = []
    private var isStopped = false
    private var duplicateIDs: [String] = []

    func duplicate(_ transferID: String) {
        lock.lock()
        duplicateIDs.append(transferID)
        lock.unlock()
    }

    var duplicates: [String] {
        lock.lock()
        defer { lock.unlock() }
        return duplicateIDs
    }

    func created(_ transferID: String, user: String, code: String) {
        lock.lock()
        createdTickets[transferID] = Ticket(user: user, code: code)
        lock.unlock()
    }

    func acknowledge(_ transferID: String) {
        lock.lock()
        acknowledgedIDs.insert(transferID)
        lock.unlock()
    }

    func stop() {
        lock.lock()
        isStopped = true
        lock.unlock()
    }

    var stopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return isStopped
    }

    var created: [String: Ticket] {
        lock.lock()
        defer { lock.unlock() }
        return createdTickets
    }

    var acknowledged: Set<String> {
        lock.lock()
        defer { lock.unlock() }
        return acknowledgedIDs
    }
}
