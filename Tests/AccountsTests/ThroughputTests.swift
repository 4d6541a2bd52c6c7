import Foundation
import Storage
import XCTest

@testable import Accounts

/// Confirmed transfers per second (transfer + confirm, `synchronous=FULL`) next to the bare
/// SQLite commit rate of the same disk, with and without group commit. Runs only with
/// `LATCHKEY_BENCH=1` (it keeps both cores busy for a few seconds).
final class ThroughputTests: AccountsTestCase {
    func testConfirmedTransfersPerSecondAgainstBareCommitRate() throws {
        try XCTSkipUnless(ProcessInfo.processInfo.environment["LATCHKEY_BENCH"] == "1", "set LATCHKEY_BENCH=1 to measure")
        let seconds = Double(ProcessInfo.processInfo.environment["LATCHKEY_BENCH_SECONDS"] ?? "3") ?? 3
        // The disk is shared and its fsync time drifts: probe it right before each configuration.
        for groupCommitMax in [1, 64] {
            let bare = try CommitProbe.commitsPerSecond(directory: directory, count: 1_000, synchronous: .full)
            try openService(groupCommitMax: groupCommitMax)
            let rate = try measure(seconds: seconds, threads: 16)
            let statistics = store.groupCommitStatistics
            print("bench: bare SQLite commits/s (synchronous=FULL, one INSERT each): \(Int(bare)); "
                + "group-commit-max \(groupCommitMax): \(Int(rate)) confirmed transfers/s "
                + "(\(String(format: "%.0f", 100 * rate / bare))% of bare; "
                + "\(statistics.jobs) writes in \(statistics.batches) transactions)")
            try assertAuditClean()
        }
    }

    private func measure(seconds: Double, threads: Int) throws -> Double {
        let users = (0..<threads).map { "bench-\(UUID().uuidString.prefix(8))-\($0)" }
        for user in users { try fund(user, .checking, 100_000_000) }
        let service = self.service!
        let verification = self.verification!
        let confirmed = OutcomeList()
        let deadline = Date().addingTimeInterval(seconds)
        let started = Date()
        DispatchQueue.concurrentPerform(iterations: threads) { worker in
            var round = 0
            var done = 0
            while Date() < deadline {
                round += 1
                guard let ticket = try? service.transfer(
                    userID: users[worker], TransferRequest(from: .checking, to: .saving, amountMinor: 1, idempotencyKey: "r\(round)"),
                    context: nil),
                    let code = verification.request(ticket.transfer.requestID!)?.code,
                    (try? service.confirm(userID: users[worker], transferID: ticket.transfer.id, code: code, context: nil)) != nil
                else { continue }
                done += 1
            }
            confirmed.append(String(done))
        }
        let elapsed = Date().timeIntervalSince(started)
        return Double(confirmed.all.compactMap { Int($0) }.reduce(0, +)) / elapsed
    }
}
