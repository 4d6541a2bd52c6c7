import Dispatch
import Foundation
@testable import Reset
import Runtime
import TestSupport
import XCTest


/// Rate limits and the job queue when reset replicas share one database. Each replica here is
/// a service with its own store (its own connections) over the same data; every mail goes to
/// the one recording provider, so a mail sent twice anywhere is seen.
final class ResetReplicaTests: ResetTestCase {
    private func replicas(_ count: Int, _ settings: ResetSettings = ResetSettings()) throws -> [ResetService] {
        try XCTSkipUnless(backend == .postgres, "replicas share one database only on PostgreSQL")
        let clock = self.clock!
        return try (0..<count).map { _ in
            ResetService(
                settings: settings, store: try openStore(), subjects: ResetSubject(key: Array(repeating: 7, count: 32)), identity: identity,
                mail: mail, composer: ResetMailComposer(linkTemplate: try LinkTemplate(LinkTemplate.defaultTemplate)),
                metrics: metrics, logger: Logger(service: "reset", minimumLevel: .debug, sink: logs), nowMilliseconds: { clock.nowMilliseconds() })
        }
    }

    func testABurstForOneAddressOverTwoReplicasIsAdmittedOnceAndMailedOnce() throws {
        let replicas = try replicas(2)
        let contexts = (0..<20).map { _ in context() }
        let errors = SharedList<String>()
        DispatchQueue.concurrentPerform(iterations: 20) { index in
            do { try replicas[index % 2].request(email: "alice@example.com", context: contexts[index]) } catch { errors.append("\(error)") }
        }
        XCTAssertEqual(errors.all, [], "every request is answered ok")
        XCTAssertEqual(metrics.counter("reset.requested"), 20)
        XCTAssertEqual(metrics.counter("reset.refused"), 19, "one request a minute per address, across replicas")
        DispatchQueue.concurrentPerform(iterations: 4) { index in
            while replicas[index % 2].runNextJob() {}
        }
        XCTAssertEqual(mail.sent.count, 1, "the one admitted request is mailed once")
    }

    func testMailWorkersOfTwoReplicasDoEveryJobExactlyOnce() throws {
        var settings = ResetSettings()
        settings.clientPerHour = 1000
        let replicas = try replicas(2, settings)
        for index in 0..<30 {
            identity.add(userID: "u_\(index)", email: "user\(index)@example.com", password: "old password 1234")
            try replicas[index % 2].request(email: "user\(index)@example.com", context: context())
        }
        DispatchQueue.concurrentPerform(iterations: 6) { index in
            while replicas[index % 2].runNextJob() {}
        }
        XCTAssertEqual(mail.sent.count, 30)
        XCTAssertEqual(Set(mail.sent.map(\.to)).count, 30, "no job done twice")
    }
}

/// A job whose claimer died is redone once its lease ends, by any worker, on either backend.
final class ResetJobLeaseTests: ResetTestCase {
    func testAJobWhoseClaimerDiedIsTakenAgainOnlyAfterItsLease() throws {
        try service.request(email: "alice@example.com", context: context())
        let lease = service.settings.jobLeaseMilliseconds
        // A replica claims it and dies (no requeue, no restart of that replica).
        XCTAssertNotNil(try store.claimDueJob(nowMilliseconds: clock.nowMilliseconds(), leaseUntilMilliseconds: clock.nowMilliseconds() + lease))
        clock.advance(seconds: lease / 1000 - 1)
        XCTAssertFalse(service.runNextJob(), "still under its lease")
        clock.advance(seconds: 1)
        runJobs()
        XCTAssertEqual(mail.sent.count, 1)
        XCTAssertFalse(service.runNextJob(), "done once, then gone")
    }
}
