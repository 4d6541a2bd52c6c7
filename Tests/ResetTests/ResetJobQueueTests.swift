import Delivery
import Dispatch
import Foundation
import Platform
@testable import Reset
import Runtime
import TestSupport
import XCTest


/// The durable job queue behind `reset.request` and `reset.complete`.
final class ResetJobQueueTests: ResetTestCase {
    /// kill -9 mid-job, in process: the claimed job is redone after the restart, and the rate
    /// limit it was admitted under (one request a minute per address) does not refuse it again.
    func testAJobInterruptedMidRunIsRedoneAfterARestartAndAdmittedOnce() throws {
        try service.request(email: "alice@example.com", context: context())
        let claimed = try XCTUnwrap(try store.claimDueJob(nowMilliseconds: clock.nowMilliseconds(), leaseUntilMilliseconds: clock.nowMilliseconds() + 300_000))
        XCTAssertEqual(claimed.attempts, 1)
        XCTAssertFalse(service.runNextJob(), "a running job is not taken twice")

        store = try openStore()
        try makeService(ResetSettings())  // the restart: a new service over the same data
        try service.requeueInterruptedJobs()
        if backend == .postgres {
            // Another replica may be running it: only the end of its lease frees it.
            XCTAssertFalse(service.runNextJob(), "a job under lease is not taken on PostgreSQL")
            clock.advance(seconds: 300)
        }
        runJobs()
        XCTAssertEqual(mail.sent.count, 1)
        XCTAssertEqual(metrics.counter("reset.refused"), 0)
        XCTAssertFalse(service.runNextJob(), "done jobs leave the queue")
    }

    func testTransientFailuresAreRetriedThenGivenUp() throws {
        var settings = ResetSettings()
        settings.jobAttempts = 2
        try makeService(settings)
        identity.failing = ["identity.user"]
        try service.request(email: "alice@example.com", context: context())
        runJobs()
        XCTAssertFalse(service.runNextJob(), "not due before the back-off")
        clock.advance(seconds: 1)
        runJobs()
        XCTAssertEqual(identity.callCount("identity.user"), 2, "two tries, no more")
        XCTAssertEqual(metrics.counter("reset.request_failed"), 1)
        clock.advance(seconds: 120)
        XCTAssertFalse(service.runNextJob(), "given up and gone")
    }

    /// The claim is one transaction: eight mail workers at once do each job once.
    func testABurstOfWorkersDoesEveryJobExactlyOnce() throws {
        var settings = ResetSettings()
        settings.clientPerHour = 1000
        try makeService(settings)
        for index in 0..<40 {
            identity.add(userID: "u_\(index)", email: "user\(index)@example.com", password: "old password 1234")
            try service.request(email: "user\(index)@example.com", context: context())
        }
        let service = self.service!
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            while service.runNextJob() {}
        }
        XCTAssertEqual(mail.sent.count, 40)
        XCTAssertEqual(Set(mail.sent.map(\.to)).count, 40)
    }

    func testTheMailWorkersSendWhatIsQueuedAndStopWhenItIsDone() throws {
        let service = self.service!
        let workers = DeliveryWorkers(workerCount: 2, name: "reset-mail-test", logger: Logger(service: "reset", sink: logs)) { DeliveryPass(handled: service.runNextJob()) }
        service.jobQueued.onQueued { [weak workers] in workers?.wake() }
        try service.request(email: "alice@example.com", context: context())
        XCTAssertTrue(workers.stop(deadlineMilliseconds: MonotonicClock.nowMilliseconds() + 5000), "what was due is done before the stop")
        XCTAssertEqual(mail.sent.count, 1)
    }
}
