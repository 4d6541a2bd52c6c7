import Delivery
import DeliveryTestSupport
import Foundation
import LineProtocol
import Runtime
import Storage
import TestSupport
@testable import Verification
import XCTest


/// Several replicas over one database, as on PostgreSQL (and, for these rules, two handles on
/// one SQLite file): each replica is its own `VerificationService` with its own connections.
/// The rules must hold across them: one live code, the send limits, one claim per message, and
/// a restart that takes back only its own interrupted sends.
class SharedDatabaseTests: VerificationTestCase {
    private let logger = Logger(service: "verification", sink: LogSink())

    private func replicas(_ count: Int, clock: ManualClock, provider: DeliveryProvider, _ configure: (inout VerificationSettings) -> Void = { _ in })
        throws -> [VerificationService]
    {
        try (1...count).map { index in
            var settings = VerificationSettings(replicaID: "verification-\(index)")
            settings.requestIDsNameReplica = false
            configure(&settings)
            return VerificationService(
                settings: settings, store: SQLVerificationStore(database: try openDatabase()), providers: ChannelProviders(all: provider),
                key: Array(repeating: 7, count: 32), clock: clock)
        }
    }

    private func start(_ service: VerificationService, number: String = "+15555550100", user: String? = nil) throws -> String {
        try Self.start(service, number: number, user: user, logger: logger)
    }

    private static func start(_ service: VerificationService, number: String = "+15555550100", user: String? = nil, logger: Logger) throws -> String {
        var parameters = StartParameters(workflow: .sms, purpose: .transaction)
        parameters.number = number
        parameters.userID = user
        parameters.provenNumber = user == nil ? nil : number
        return try service.start(parameters, logger: logger)
    }

    func testRequestIDsOfSharedReplicasNameNoReplicaAndAnyReplicaServesThem() throws {
        let provider = RecordingProvider()
        let services = try replicas(2, clock: ManualClock(), provider: provider)
        let id = try start(services[0])
        XCTAssertTrue(id.hasPrefix("vr_"))
        XCTAssertFalse(id.dropFirst(3).contains("_"), "no replica name for the gateway to pin: \(id)")
        let later = try start(services[1], number: "+15555550101")
        XCTAssertLessThan(id, later, "ids sort by when they were issued")
        XCTAssertNotEqual(services[1].sendNextQueuedDelivery(logger: logger), .nothingDue, "the other replica sends it")
        let code = try XCTUnwrap(provider.code(for: id))
        XCTAssertEqual(try services[1].check(requestID: id, code: code, payload: nil, owner: nil, logger: logger).channel, .sms)
    }

    func testStartsForOneNumberThroughThreeReplicasRespectThePerNumberLimit() throws {
        let provider = RecordingProvider()
        let services = try replicas(3, clock: ManualClock(), provider: provider)
        let (outcomes, logger) = (SharedList<String>(), logger)
        // Twelve users claim the same proven number at once, spread over the replicas.
        DispatchQueue.concurrentPerform(iterations: 12) { index in
            do {
                _ = try Self.start(services[index % 3], user: "user-\(index)", logger: logger)
                outcomes.append("started")
            } catch let error as VerificationError {
                outcomes.append(error.rpcError.reasonText ?? "?")
            } catch {
                outcomes.append("\(error)")
            }
        }
        XCTAssertEqual(outcomes.all.filter { $0 == "started" }.count, 3, "3 per number per 10 minutes: \(outcomes.all)")
        XCTAssertEqual(outcomes.all.filter { $0 == "rate_limited" }.count, 9, "\(outcomes.all)")
    }

    func testABurstOfStartsForManyNumbersThroughThreeReplicasSpendsTheGlobalBudgetExactly() throws {
        let provider = RecordingProvider()
        let services = try replicas(3, clock: ManualClock(), provider: provider) { $0.global = [SendLimit(count: 5, windowSeconds: 3600)] }
        let (outcomes, logger) = (SharedList<String>(), logger)
        // Every start has its own number: only the global budget (one hot counter row) limits them.
        DispatchQueue.concurrentPerform(iterations: 40) { index in
            do {
                _ = try Self.start(services[index % 3], number: String(format: "+1555555%04d", 1000 + index), logger: logger)
                outcomes.append("started")
            } catch let error as VerificationError {
                outcomes.append(error.rpcError.reasonText ?? "?")
            } catch {
                outcomes.append("\(error)")
            }
        }
        XCTAssertEqual(outcomes.all.filter { $0 == "started" }.count, 5, "\(outcomes.all)")
        XCTAssertEqual(outcomes.all.filter { $0 == "rate_limited" }.count, 35, "\(outcomes.all)")
        let numbered = try openDatabase().read { c in try c.query("SELECT seq FROM send_log WHERE key = 'global' ORDER BY seq") }
        XCTAssertEqual(try numbered.map { try $0.int("seq") }, [1, 2, 3, 4, 5], "each admitted send numbered once")
    }

    /// Replicas number each key's sends from its newest row in the log: two that read the same
    /// newest number at once must not both take the next (on PostgreSQL one transaction is
    /// retried), and none may fail for it.
    func testStartsRacingThroughThreeReplicasNumberEverySendOfAKeyOnce() throws {
        let services = try replicas(3, clock: ManualClock(), provider: RecordingProvider())
        let (outcomes, logger) = (SharedList<String>(), logger)
        DispatchQueue.concurrentPerform(iterations: 48) { index in
            do {
                _ = try Self.start(services[index % 3], number: String(format: "+1555556%04d", index), logger: logger)
                outcomes.append("started")
            } catch {
                outcomes.append("\(error)")
            }
        }
        XCTAssertEqual(outcomes.all.filter { $0 == "started" }.count, 48, "\(outcomes.all)")
        let numbered = try openDatabase().read { c in try c.query("SELECT seq FROM send_log WHERE key = 'global' ORDER BY seq") }
        XCTAssertEqual(try numbered.map { try $0.int("seq") }, Array(1...48), "every send numbered once, none skipped")
    }

    func testRacingStartsOfOneUserThroughThreeReplicasGiveOneLiveCode() throws {
        let services = try replicas(3, clock: ManualClock(), provider: RecordingProvider()) {
            $0.perNumber = [SendLimit(count: 100, windowSeconds: 600)]
        }
        let (outcomes, logger) = (SharedList<String>(), logger)
        DispatchQueue.concurrentPerform(iterations: 12) { index in
            do {
                _ = try Self.start(services[index % 3], user: "alice", logger: logger)
                outcomes.append("started")
            } catch let error as VerificationError {
                outcomes.append(error.rpcError.reasonText ?? "?")
            } catch {
                outcomes.append("\(error)")
            }
        }
        XCTAssertEqual(outcomes.all.filter { $0 == "started" }.count, 1, "\(outcomes.all)")
        XCTAssertEqual(outcomes.all.filter { $0 == "concurrent_verification" }.count, 11, "\(outcomes.all)")
    }

    func testEveryQueuedMessageIsSentOnceByWorkersOfThreeReplicas() throws {
        let provider = ScriptedProvider()
        let services = try replicas(3, clock: ManualClock(), provider: provider)
        var ids: [String] = []
        for index in 0..<30 { ids.append(try start(services[index % 3], number: String(format: "+1555555%04d", 3000 + index))) }
        let logger = self.logger
        DispatchQueue.concurrentPerform(iterations: 9) { worker in
            while services[worker % 3].sendNextQueuedDelivery(logger: logger) != .nothingDue {}
        }
        let sent = provider.sent
        XCTAssertEqual(sent.count, 30, "each message once, none twice")
        XCTAssertEqual(Set(sent.compactMap(\.deliveryID)).count, 30)
        XCTAssertEqual(Set(sent.compactMap(\.requestID)), Set(ids))
    }

    func testARestartingReplicaTakesBackOnlyItsOwnInterruptedSends() throws {
        let clock = ManualClock()
        let provider = ScriptedProvider()
        let services = try replicas(2, clock: clock, provider: provider)
        _ = try start(services[0])
        // Replica 1 takes the message and is still sending it (or died doing so).
        let claimed = try XCTUnwrap(try services[0].store.write { tx in
            try tx.claimDueDelivery(nowMilliseconds: clock.nowMilliseconds(), claimant: "verification-1")?.delivery
        })
        // Replica 2 restarts: the send in flight on replica 1 is not its own.
        try services[1].requeueInterruptedDeliveries(logger: logger)
        XCTAssertEqual(services[1].sendNextQueuedDelivery(logger: logger), .nothingDue, "another live replica's send is not doubled")
        // Replica 1 restarts: its own interrupted send goes out again, same key.
        try services[0].requeueInterruptedDeliveries(logger: logger)
        XCTAssertNotEqual(services[1].sendNextQueuedDelivery(logger: logger), .nothingDue)
        XCTAssertEqual(provider.sent.map(\.deliveryID), [claimed.id])
    }

    func testASendWhoseReplicaNeverCameBackIsTakenOverAfterTheLease() throws {
        let clock = ManualClock()
        let provider = ScriptedProvider()
        let services = try replicas(2, clock: clock, provider: provider)
        _ = try start(services[0])
        let claimed = try XCTUnwrap(try services[0].store.write { tx in
            try tx.claimDueDelivery(nowMilliseconds: clock.nowMilliseconds(), claimant: "verification-1")?.delivery
        })
        let lease = services[1].settings.delivery.claimLeaseMilliseconds
        clock.advance(seconds: lease / 1000 - 1)
        services[1].requeueAbandonedDeliveries(logger: logger)
        XCTAssertEqual(services[1].sendNextQueuedDelivery(logger: logger), .nothingDue, "within the lease the claim stands")
        clock.advance(seconds: 2)
        services[1].requeueAbandonedDeliveries(logger: logger)
        XCTAssertNotEqual(services[1].sendNextQueuedDelivery(logger: logger), .nothingDue)
        XCTAssertEqual(provider.sent.map(\.deliveryID), [claimed.id])
    }
}
