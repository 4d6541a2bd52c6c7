import Delivery
import DeliveryTestSupport
import Foundation
import LineProtocol
import Platform
import Runtime
import Storage
import StoreTestSupport
import TestSupport
@testable import Verification
import XCTest


extension ManualClock: VerificationClock {}

/// Eight threads start five codes each (numbers `+1555` `numberBlock` `0000`...) while four
/// delivery workers drain; asserts every message is sent exactly once without a later wake.
func assertABurstOfStartsSendsEveryMessageOnce(
    _ service: VerificationService, _ provider: ScriptedProvider, numberBlock: String, file: StaticString = #filePath, line: UInt = #line
) {
    let logger = Logger(service: "verification", sink: LogSink())
    let workers = DeliveryWorkers(workerCount: 4, name: "delivery-test", logger: logger) { service.sendNextQueuedDelivery(logger: logger) }
    service.deliveryWakeup.onQueued { [weak workers] in workers?.wake() }
    let ids = SharedList<String>()
    let failures = SharedList<String>()
    DispatchQueue.concurrentPerform(iterations: 8) { thread in
        for index in 0..<5 {
            var parameters = StartParameters(workflow: .sms, purpose: .transaction)
            parameters.number = "+1555" + numberBlock + String(format: "%04d", thread * 10 + index)
            do { ids.append(try service.start(parameters, logger: logger)) } catch { failures.append("\(error)") }
        }
    }
    XCTAssertEqual(failures.all, [], file: file, line: line)
    XCTAssertTrue(provider.waitFor(sent: 40), "sent \(provider.sent.count) of 40 without another wake", file: file, line: line)
    XCTAssertTrue(workers.stop(deadlineMilliseconds: MonotonicClock.nowMilliseconds() + 5000), file: file, line: line)
    XCTAssertEqual(provider.sent.count, 40, file: file, line: line)
    XCTAssertEqual(Set(provider.sent.compactMap(\.requestID)), Set(ids.all), file: file, line: line)
}

/// A service over a fresh database, a manual clock and a recording provider.
final class Harness: @unchecked Sendable {
    let clock = ManualClock()
    let provider = RecordingProvider()
    let service: VerificationService
    let database: any SQLDatabase
    let logSink = LogSink()
    let logger: Logger

    init(database: any SQLDatabase, _ configure: (inout VerificationSettings) -> Void = { _ in }) {
        self.database = database
        var settings = VerificationSettings(replicaID: "test-1")
        settings.minimumNextWaitSeconds = 1
        configure(&settings)
        service = VerificationService(
            settings: settings, store: SQLVerificationStore(database: database), providers: ChannelProviders(all: provider),
            key: Array(repeating: 7, count: 32), clock: clock)
        logger = Logger(service: "verification", sink: logSink)
        // Queued messages go out at once on the calling thread: the tests read them right after.
        service.deliveryWakeup.onQueued { [weak service, logger] in
            while (service?.sendNextQueuedDelivery(logger: logger) ?? .nothingDue) != .nothingDue {}
        }
    }

    /// Sends every message that is due now (retries after their back-off).
    func sendDue() {
        while service.sendNextQueuedDelivery(logger: logger) != .nothingDue {}
    }

    func start(number: String = "+15555550100", workflow: Workflow = .sms, purpose: Purpose = .transaction,
               _ edit: (inout StartParameters) -> Void = { _ in }) throws -> String {
        var parameters = StartParameters(workflow: workflow, purpose: purpose)
        parameters.number = number
        edit(&parameters)
        return try service.start(parameters, logger: logger)
    }

    func check(_ id: String, _ code: String, payload: JSON? = nil) throws -> CheckResult {
        try service.check(requestID: id, code: code, payload: payload, owner: nil, logger: logger)
    }

    func code(_ id: String) -> String { provider.code(for: id)! }
}

/// A test case whose services keep their requests in `databases`: SQLite files, or PostgreSQL
/// schemas in the `...OnPostgresTests` twins (which declare one test of their own, since Linux
/// test discovery lists inherited tests only for such a class).
class VerificationTestCase: XCTestCase {
    class var backend: TestBackend { .sqlite }
    var databases: TestDatabases!

    override func setUpWithError() throws {
        databases = try TestDatabases(backend: Self.backend)
    }

    override func tearDown() {
        databases?.removeAll()
    }

    /// The verification database of this test; opening it again reopens the same data.
    func openDatabase() throws -> any SQLDatabase {
        try databases.open("verification", sqlite: VerificationSchema.sqlite, postgres: VerificationSchema.postgres)
    }

    /// A service (replica `replicaID`) over the test's database whose queue is drained only when
    /// the test says so; `handOff` places for first messages (0: every message is queued).
    func deliveryService(
        _ provider: DeliveryProvider, clock: ManualClock = ManualClock(), replicaID: String = "test-1", handOff: Int = 0,
        metrics: Metrics? = nil
    ) throws -> VerificationService {
        var settings = VerificationSettings(replicaID: replicaID)
        settings.delivery.initialBackoffMilliseconds = 1000
        settings.delivery.handOffCapacity = handOff
        return VerificationService(
            settings: settings, store: SQLVerificationStore(database: try openDatabase()), providers: ChannelProviders(all: provider),
            key: Array(repeating: 7, count: 32), clock: clock, metrics: metrics)
    }

    /// Starts an SMS code for a transaction to `number`.
    func startSMS(_ service: VerificationService, number: String = "+15555550100") throws -> String {
        var parameters = StartParameters(workflow: .sms, purpose: .transaction)
        parameters.number = number
        return try service.start(parameters, logger: Logger(service: "verification", sink: LogSink()))
    }

    func makeHarness(_ configure: (inout VerificationSettings) -> Void = { _ in }) throws -> Harness {
        Harness(database: try openDatabase(), configure)
    }
}

/// Asserts `body` throws the given verification error.
func XCTAssertVerificationError<T>(_ expected: VerificationError, _ body: @autoclosure () throws -> T, _ note: String = "", file: StaticString = #filePath, line: UInt = #line) {
    do {
        _ = try body()
        XCTFail("expected \(expected), got a result", file: file, line: line)
    } catch let error as VerificationError {
        XCTAssertEqual(error, expected, note, file: file, line: line)
    } catch {
        XCTFail("expected \(expected), got \(error)", file: file, line: line)
    }
}

/// A wrong code of the same length as `code`.
func wrong(_ code: String) -> String {
    String(code.map { $0 == "9" ? "0" : Character(String(Int(String($0))! + 1)) })
}
