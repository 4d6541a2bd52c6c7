import StoreTestSupport
import Foundation
import LineProtocol
import Storage
import TestSupport
import XCTest

@testable import Accounts

class LedgerTests: AccountsTestCase {
    func testBalancesStartAtZeroInBothAccounts() throws {
        let balances = try service.balances(userID: "u1")
        XCTAssertEqual(balances, [
            AccountBalance(name: "checking", balanceMinor: 0, currency: "USD"),
            AccountBalance(name: "saving", balanceMinor: 0, currency: "USD"),
        ])
    }

    func testTransferOfTheExactBalanceIsAllowed() throws {
        try fund("u1", .checking, 10_000)
        let pending = try transfer("u1", .checking, .saving, 10_000)
        XCTAssertEqual(pending.state, .pending)
        let after = try service.confirm(userID: "u1", transferID: pending.id, code: code(for: pending), context: nil)
        XCTAssertEqual(after.map(\.balanceMinor), [0, 10_000])
        try assertAuditClean()
    }

    func testCodeIsBoundToAmountAccountsAndTransfer() throws {
        try fund("u1", .checking, 500)
        let pending = try transfer("u1", .checking, .saving, 250)
        let request = try XCTUnwrap(verification.request(try XCTUnwrap(pending.requestID)))
        XCTAssertEqual(request.userID, "u1")
        XCTAssertEqual(request.payload, [
            "amount": 250, "currency": "USD", "from": "checking", "to": "saving", "transfer_id": .string(pending.id),
        ])
    }

    /// Transfers are keyed by id in three indexes: ids issued in order share their newest pages.
    func testTransferAndDepositIDsSortInTheOrderTheyWereIssued() throws {
        let deposits = try (0..<10).map { _ in try service.deposit(userID: "u1", account: .checking, amountMinor: 100, idempotencyKey: UUID().uuidString) }
        XCTAssertEqual(deposits.count, 10)
        let history = try service.history(userID: "u1", limit: 10, before: nil)
        let depositIDs = history.entries.map(\.transferID).reversed()
        XCTAssertEqual(Array(depositIDs), depositIDs.sorted(), "newest first in history, so oldest first reversed")
        let transfers = try (0..<10).map { _ in try transfer("u1", .checking, .saving, 1).id }
        XCTAssertEqual(transfers, transfers.sorted())
    }

    func testTransferBeyondTheBalanceIsRefused() throws {
        try fund("u1", .checking, 100)
        assertThrows(.insufficientFunds) { _ = try transfer("u1", .checking, .saving, 101) }
        assertThrows(.insufficientFunds) { _ = try transfer("u1", .saving, .checking, 1) }
        XCTAssertEqual(verification.startCount, 0)
    }

    func testFundsAreCheckedAgainAtConfirm() throws {
        try fund("u1", .checking, 100)
        let first = try transfer("u1", .checking, .saving, 100)
        let second = try transfer("u1", .checking, .saving, 100)
        _ = try service.confirm(userID: "u1", transferID: first.id, code: code(for: first), context: nil)
        assertThrows(.insufficientFunds) { _ = try service.confirm(userID: "u1", transferID: second.id, code: code(for: second), context: nil) }
        XCTAssertEqual(try store.transfer(id: second.id, userID: "u1")?.state, .failed)
        XCTAssertEqual(try balance("u1", .checking), 0)
        XCTAssertEqual(try balance("u1", .saving), 100)
        try assertAuditClean()
    }

    func testFundsThatGoWhileTheCodeIsStartingAreCaughtAtConfirm() throws {
        try fund("u1", .checking, 100)
        let first = try transfer("u1", .checking, .saving, 100)
        let service = self.service!
        let firstCode = code(for: first)
        verification.afterStart = { _ = try? service.confirm(userID: "u1", transferID: first.id, code: firstCode, context: nil) }
        let second = try transfer("u1", .checking, .saving, 100)
        assertThrows(.insufficientFunds) { _ = try service.confirm(userID: "u1", transferID: second.id, code: code(for: second), context: nil) }
        XCTAssertEqual(try store.transfer(id: second.id, userID: "u1")?.state, .failed)
        XCTAssertEqual(try balance("u1", .checking), 0)
        try assertAuditClean()
    }

    func testInvalidRequestsAreRefused() throws {
        try fund("u1", .checking, 100)
        assertThrows(.invalidParams(field: "to", message: "from and to must be different accounts")) {
            _ = try transfer("u1", .checking, .checking, 1)
        }
        assertReason(.invalidParams) { _ = try transfer("u1", .checking, .saving, 0) }
        assertReason(.invalidParams) { _ = try transfer("u1", .checking, .saving, -5) }
        assertReason(.invalidParams) { _ = try transfer("u1", .checking, .saving, service.settings.maxAmountMinor + 1) }
    }

    func testSameKeyAndSameRequestGiveTheSameTransfer() throws {
        try fund("u1", .checking, 1_000)
        let first = try transfer("u1", .checking, .saving, 300, key: "k1")
        let again = try transfer("u1", .checking, .saving, 300, key: "k1")
        XCTAssertEqual(first, again)
        XCTAssertEqual(verification.startCount, 1)
        _ = try service.confirm(userID: "u1", transferID: first.id, code: code(for: first), context: nil)
        let afterDone = try transfer("u1", .checking, .saving, 300, key: "k1")
        XCTAssertEqual(afterDone.id, first.id)
        XCTAssertEqual(afterDone.state, .done)
        XCTAssertEqual(try balance("u1", .checking), 700)
    }

    func testSameKeyWithADifferentRequestIsAConflict() throws {
        try fund("u1", .checking, 1_000)
        _ = try transfer("u1", .checking, .saving, 300, key: "k1")
        assertReason(.conflict) { _ = try transfer("u1", .checking, .saving, 301, key: "k1") }
        assertReason(.conflict) { _ = try transfer("u1", .saving, .checking, 300, key: "k1") }
        // Keys belong to their user.
        try fund("u2", .checking, 1_000)
        XCTAssertEqual(try transfer("u2", .checking, .saving, 999, key: "k1").amountMinor, 999)
    }

    func testFailedStartForgetsTheTransferSoTheKeyCanBeRetried() throws {
        try fund("u1", .checking, 1_000)
        verification.failStart = RPCError(.rateLimited, "slow down", extra: ["retry_after": 30])
        assertReason(.rateLimited) { _ = try transfer("u1", .checking, .saving, 300, key: "k1") }
        verification.failStart = nil
        let retried = try transfer("u1", .checking, .saving, 300, key: "k1")
        XCTAssertNotNil(retried.requestID)
    }

    func testWrongCodePassesThroughAttemptsLeftAndMovesNothing() throws {
        try fund("u1", .checking, 1_000)
        let pending = try transfer("u1", .checking, .saving, 300)
        XCTAssertThrowsError(try service.confirm(userID: "u1", transferID: pending.id, code: "000000", context: nil)) { error in
            XCTAssertEqual((error as? RPCError)?.reason, .invalidCode)
            XCTAssertEqual((error as? RPCError)?.data?["attempts_left"], 2)
        }
        XCTAssertEqual(try balance("u1", .checking), 1_000)
        _ = try service.confirm(userID: "u1", transferID: pending.id, code: code(for: pending), context: nil)
        XCTAssertEqual(try balance("u1", .checking), 700)
    }

    func testCodeOfOneTransferCannotConfirmAnother() throws {
        try fund("u1", .checking, 1_000)
        let a = try transfer("u1", .checking, .saving, 100)
        let b = try transfer("u1", .checking, .saving, 900)
        assertReason(.invalidCode) { _ = try service.confirm(userID: "u1", transferID: b.id, code: code(for: a), context: nil) }
        XCTAssertEqual(try balance("u1", .checking), 1_000)
    }

    func testANewTransferSupersedesTheUsersPendingOneWhenVerificationAllowsOneLiveCode() throws {
        verification.oneLiveCodePerUser = true
        try fund("u1", .checking, 1_000)
        let old = try transfer("u1", .checking, .saving, 100)
        let new = try transfer("u1", .checking, .saving, 200)
        XCTAssertEqual(verification.request(old.requestID!)?.cancelled, true)
        XCTAssertEqual(try store.transfer(id: old.id, userID: "u1")?.state, .cancelled)
        assertReason(.conflict) { _ = try service.confirm(userID: "u1", transferID: old.id, code: code(for: old), context: nil) }
        _ = try service.confirm(userID: "u1", transferID: new.id, code: code(for: new), context: nil)
        XCTAssertEqual(try balance("u1", .checking), 800)
        // A live code that is not one of our transfers (a login) is not touched.
        let login = try verification.start(userID: "u2", provenPhone: nil, payload: [:], expirySeconds: 60, context: nil)
        try fund("u2", .checking, 1_000)
        assertReason(.concurrentVerification) { _ = try transfer("u2", .checking, .saving, 100) }
        XCTAssertEqual(verification.request(login)?.cancelled, false)
        try assertAuditClean()
    }

    func testAnotherUsersTransferIsNotFound() throws {
        try fund("u1", .checking, 1_000)
        let pending = try transfer("u1", .checking, .saving, 100)
        assertThrows(.notFound) { _ = try service.confirm(userID: "u2", transferID: pending.id, code: code(for: pending), context: nil) }
        assertThrows(.notFound) { _ = try service.confirm(userID: "u1", transferID: "tr_nothing", code: "1", context: nil) }
        XCTAssertEqual(try service.history(userID: "u2", limit: nil, before: nil).entries, [])
    }

    func testPendingTransferExpiresWithItsCode() throws {
        try fund("u1", .checking, 1_000)
        let pending = try transfer("u1", .checking, .saving, 100)
        clock.advance(seconds: service.settings.transferExpirySeconds)
        assertThrows(.expired) { _ = try service.confirm(userID: "u1", transferID: pending.id, code: code(for: pending), context: nil) }
        assertThrows(.expired) { _ = try service.confirm(userID: "u1", transferID: pending.id, code: code(for: pending), context: nil) }
        XCTAssertEqual(try store.transfer(id: pending.id, userID: "u1")?.state, .expired)
        XCTAssertEqual(try balance("u1", .checking), 1_000)
        try assertAuditClean()
    }

    func testTransferExpiresWhenVerificationNoLongerKnowsItsCode() throws {
        try fund("u1", .checking, 1_000)
        let pending = try transfer("u1", .checking, .saving, 100)
        let code = code(for: pending)
        verification.forget(pending.requestID!)
        assertThrows(.expired) { _ = try service.confirm(userID: "u1", transferID: pending.id, code: code, context: nil) }
        XCTAssertEqual(try store.transfer(id: pending.id, userID: "u1")?.state, .expired)
        XCTAssertEqual(try transfer("u1", .checking, .saving, 100, key: pending.idempotencyKey).state, .expired)
    }

    func testRepeatedConfirmAnswersDoneAndMovesMoneyOnce() throws {
        try fund("u1", .checking, 1_000)
        let pending = try transfer("u1", .checking, .saving, 100)
        let first = try service.confirm(userID: "u1", transferID: pending.id, code: code(for: pending), context: nil)
        let second = try service.confirm(userID: "u1", transferID: pending.id, code: code(for: pending), context: nil)
        XCTAssertEqual(first, second)
        XCTAssertEqual(try balance("u1", .checking), 900)
    }

    func testConfirmCutShortAfterTheCodeCheckIsBookedByARetry() throws {
        try fund("u1", .checking, 1_000)
        let pending = try transfer("u1", .checking, .saving, 100)
        verification.markVerified(pending.requestID!)  // the code was checked, then the process died
        let after = try service.confirm(userID: "u1", transferID: pending.id, code: code(for: pending), context: nil)
        XCTAssertEqual(after.map(\.balanceMinor), [900, 100])
    }

    func testConcurrentConfirmsFromEightThreadsMoveMoneyOnce() throws {
        try fund("u1", .checking, 1_000)
        let pending = try transfer("u1", .checking, .saving, 400)
        let code = code(for: pending)
        let service = self.service!
        let outcomes = SharedList<String>()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            do {
                _ = try service.confirm(userID: "u1", transferID: pending.id, code: code, context: nil)
                outcomes.append("done")
            } catch {
                outcomes.append((error as? AccountsError)?.rpcError.reasonText ?? "\(error)")
            }
        }
        XCTAssertTrue(outcomes.all.allSatisfy { $0 == "done" || $0 == "conflict" }, "\(outcomes.all)")
        XCTAssertGreaterThanOrEqual(outcomes.all.filter { $0 == "done" }.count, 1)
        XCTAssertEqual(try balance("u1", .checking), 600)
        XCTAssertEqual(try balance("u1", .saving), 400)
        XCTAssertEqual(try service.history(userID: "u1", limit: 100, before: nil).entries.count, 3)
        try assertAuditClean()
    }

    func testManyTransfersConfirmedConcurrentlyConserveMoney() throws {
        let users = (0..<4).map { "user-\($0)" }
        for user in users { try fund(user, .checking, 10_000) }
        let service = self.service!
        let verification = self.verification!
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            let user = users[worker % users.count]
            for round in 0..<25 {
                let (from, to): (AccountName, AccountName) = round % 2 == 0 ? (.checking, .saving) : (.saving, .checking)
                guard let ticket = try? service.transfer(
                    userID: user, TransferRequest(from: from, to: to, amountMinor: Int64(1 + round), idempotencyKey: "\(worker)-\(round)"),
                    context: nil)
                else { continue }
                let code = verification.request(ticket.transfer.requestID!)!.code
                _ = try? service.confirm(userID: user, transferID: ticket.transfer.id, code: code, context: nil)
            }
        }
        for user in users {
            let total = try service.balances(userID: user).map(\.balanceMinor).reduce(0, +)
            XCTAssertEqual(total, 10_000)
        }
        try assertAuditClean()
        let statistics = store.groupCommitStatistics
        XCTAssertGreaterThanOrEqual(statistics.jobs, statistics.batches)
    }

    func testAuditFindsACorruptedBalance() throws {
        try fund("u1", .checking, 1_000)
        try assertAuditClean()
        _ = try store.database.write { c in try c.run("UPDATE accounts SET balance = balance + 1 WHERE user_id = 'u1' AND name = 'checking'") }
        let kinds = Set(try service.audit().map(\.kind))
        XCTAssertEqual(kinds, ["balance_mismatch", "sum_not_conserved"])
    }

    func testAuditFindsAnUnbalancedPairAndANegativeBalance() throws {
        try fund("u1", .checking, 1_000)
        _ = try store.database.write { c in
            try c.run("UPDATE ledger SET amount = amount + 5 WHERE amount > 0")
            try c.run("DELETE FROM ledger WHERE amount > 0")
            switch c.dialect {
            case .sqlite: try c.execute("PRAGMA ignore_check_constraints = ON")
            case .postgres: try c.execute("ALTER TABLE accounts DROP CONSTRAINT accounts_check")
            }
            try c.run("UPDATE accounts SET balance = -3 WHERE user_id = 'u1' AND name = 'checking'")
        }
        let kinds = Set(try service.audit().map(\.kind))
        XCTAssertTrue(kinds.isSuperset(of: ["unbalanced_pair", "balance_mismatch", "negative_balance"]), "\(kinds)")
    }

    func testAuditFindsADoneTransferWithoutItsLedgerRows() throws {
        try fund("u1", .checking, 1_000)
        let pending = try transfer("u1", .checking, .saving, 100)
        _ = try service.confirm(userID: "u1", transferID: pending.id, code: code(for: pending), context: nil)
        _ = try store.database.write { c in try c.run("DELETE FROM ledger WHERE transfer_id = ?", [.text(pending.id)]) }
        let kinds = Set(try service.audit().map(\.kind))
        XCTAssertEqual(kinds, ["state_ledger_mismatch", "balance_mismatch"])
    }

    func testDatabaseRefusesANegativeBalance() throws {
        try fund("u1", .checking, 10)
        XCTAssertThrowsError(try store.database.write { c in
            try c.run("UPDATE accounts SET balance = -1 WHERE user_id = 'u1' AND name = 'checking'")
        })
    }

    func testDepositIsIdempotentByKeyAndBookedAgainstExternal() throws {
        XCTAssertEqual(try fund("u1", .saving, 1_000_000, key: "demo-saving"), 1_000_000)
        XCTAssertEqual(try fund("u1", .saving, 1_000_000, key: "demo-saving"), 1_000_000)
        XCTAssertEqual(try fund("u1", .saving, 5, key: "other"), 1_000_005)
        assertReason(.conflict) { try fund("u1", .saving, 7, key: "demo-saving") }
        let entries = try service.history(userID: "u1", limit: nil, before: nil).entries
        XCTAssertEqual(entries.map(\.counterpart), ["external", "external"])
        XCTAssertEqual(entries.map(\.direction), ["credit", "credit"])
        try assertAuditClean()
    }

    /// A deposit once showed as `transfer_id: "dp_..."`, a transfer that never was.
    func testHistoryEntriesSayWhetherTheyAreADepositOrATransfer() throws {
        try fund("u1", .checking, 1_000)
        let pending = try transfer("u1", .checking, .saving, 10)
        _ = try service.confirm(userID: "u1", transferID: pending.id, code: code(for: pending), context: nil)
        let entries = try service.history(userID: "u1", limit: nil, before: nil).entries.map(\.json)
        XCTAssertEqual(entries.map { $0["kind"] }, ["transfer", "transfer", "deposit"])
        XCTAssertEqual(entries[0]["entry_id"], .string(pending.id))
        XCTAssertEqual(entries[0]["transfer_id"], .string(pending.id), "the id accounts.transfer gave")
        let deposit = entries[2]
        XCTAssertTrue(deposit["entry_id"]?.stringValue?.hasPrefix("dp_") ?? false)
        XCTAssertNil(deposit["transfer_id"], "a deposit is not a transfer")
    }

    func testHistoryIsNewestFirstWithKeysetPages() throws {
        try fund("u1", .checking, 1_000)
        for amount in [10, 20, 30] as [Int64] {
            let pending = try transfer("u1", .checking, .saving, amount)
            _ = try service.confirm(userID: "u1", transferID: pending.id, code: code(for: pending), context: nil)
        }
        // 1 deposit entry + 3 transfers x 2 entries = 7.
        let first = try service.history(userID: "u1", limit: 4, before: nil)
        XCTAssertEqual(first.entries.count, 4)
        let newest = first.entries[0]
        XCTAssertEqual(newest.amountMinor, 30)
        XCTAssertEqual(newest.account, "saving")
        XCTAssertEqual(newest.direction, "credit")
        XCTAssertEqual(newest.counterpart, "checking")
        XCTAssertEqual(newest.balanceAfterMinor, 60)
        XCTAssertEqual(first.entries[1].direction, "debit")
        XCTAssertEqual(first.entries[1].balanceAfterMinor, 940)
        XCTAssertEqual(first.entries[0].transferID, first.entries[1].transferID)
        let second = try service.history(userID: "u1", limit: 4, before: try XCTUnwrap(first.next))
        XCTAssertEqual(second.entries.count, 3)
        XCTAssertNil(second.next)
        XCTAssertEqual(second.entries.last?.counterpart, "external")
        let ids = (first.entries + second.entries).map(\.ledgerID)
        XCTAssertEqual(ids, ids.sorted(by: >))
        assertReason(.invalidParams) { _ = try service.history(userID: "u1", limit: nil, before: "abc") }
        assertReason(.invalidParams) { _ = try service.history(userID: "u1", limit: 0, before: nil) }
    }

    func testLedgerSurvivesReopen() throws {
        try fund("u1", .checking, 1_000)
        let pending = try transfer("u1", .checking, .saving, 100)
        _ = try service.confirm(userID: "u1", transferID: pending.id, code: code(for: pending), context: nil)
        service = nil
        store = nil
        try openService(groupCommitMax: 1)
        XCTAssertEqual(try balance("u1", .checking), 900)
        try assertAuditClean()
    }
}

/// The same ledger tests on PostgreSQL. (Linux test discovery lists inherited tests only for a
/// class that declares one of its own.)
final class LedgerOnPostgresTests: LedgerTests {
    override class var backend: TestBackend { .postgres }

    func testRunsOnPostgres() { XCTAssertEqual(store.database.dialect, .postgres) }
}

final class GroupCommitterTests: XCTestCase {
    private var directory = ""
    private var database: Database!
    private var committer: GroupCommitter!

    /// A table of unique numbers in a fresh file, behind batches of up to 16 writes.
    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "group-commit-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        database = try Database(path: directory + "/g.sqlite", migrations: [
            Migration(version: 1, name: "t", sql: "CREATE TABLE t (n INTEGER NOT NULL UNIQUE)"),
        ])
        committer = GroupCommitter(database: database, maxBatch: 16)
    }

    override func tearDown() {
        committer = nil
        database = nil
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testAFailingJobRollsBackAloneWhileItsBatchCommits() throws {
        let committer = self.committer!
        DispatchQueue.concurrentPerform(iterations: 64) { i in
            _ = try? committer.write { c -> Int in
                try c.run("INSERT INTO t (n) VALUES (?)", [SQLValue(i)])
                if i % 2 == 1 { throw AccountsError.conflict("odd") }
                return i
            }
        }
        let count = try database.read { c in try c.queryOne("SELECT COUNT(*) AS n FROM t")?.int("n") }
        XCTAssertEqual(count, 32)
        XCTAssertEqual(committer.statistics.jobs, 64)
    }

    /// A job alone in its batch runs without a savepoint: its error still undoes all its writes,
    /// reaches its caller as thrown, and leaves the writer ready for the next job.
    func testALoneFailingJobRollsBackItsWritesAndThrowsItsOwnError() throws {
        XCTAssertThrowsError(try committer.write { c in
            try c.run("INSERT INTO t (n) VALUES (?)", [1])
            try c.run("INSERT INTO t (n) VALUES (?)", [2])
            throw AccountsError.conflict("lone")
        }) { error in XCTAssertEqual(error as? AccountsError, .conflict("lone")) }
        XCTAssertEqual(try committer.write { c in try c.run("INSERT INTO t (n) VALUES (?)", [1]) }, 1)
        let rows = try database.read { c in try c.query("SELECT n FROM t").map { try $0.int("n") } }
        XCTAssertEqual(rows, [1])
        XCTAssertEqual(committer.statistics.batches, 2)
    }
}
