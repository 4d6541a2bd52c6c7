import StoreTestSupport
import Storage
import XCTest

// The verification suites once more with their requests in a PostgreSQL schema. Each twin
// declares a test of its own: Linux test discovery lists inherited tests only for such a class.

final class StartCheckOnPostgresTests: StartCheckTests {
    override class var backend: TestBackend { .postgres }
    func testRunsOnPostgres() throws { XCTAssertEqual(try openDatabase().dialect, .postgres) }
}

final class ConcurrencyOnPostgresTests: ConcurrencyTests {
    override class var backend: TestBackend { .postgres }
    func testRunsOnPostgres() throws { XCTAssertEqual(try openDatabase().dialect, .postgres) }
}

final class DeliveryQueueOnPostgresTests: DeliveryQueueTests {
    override class var backend: TestBackend { .postgres }
    func testRunsOnPostgres() throws { XCTAssertEqual(try openDatabase().dialect, .postgres) }
}

final class WorkflowOnPostgresTests: WorkflowTests {
    override class var backend: TestBackend { .postgres }
    func testRunsOnPostgres() throws { XCTAssertEqual(try openDatabase().dialect, .postgres) }
}

final class PayloadBindingOnPostgresTests: PayloadBindingTests {
    override class var backend: TestBackend { .postgres }
    func testRunsOnPostgres() throws { XCTAssertEqual(try openDatabase().dialect, .postgres) }
}

final class SendLimitOnPostgresTests: SendLimitTests {
    override class var backend: TestBackend { .postgres }
    func testRunsOnPostgres() throws { XCTAssertEqual(try openDatabase().dialect, .postgres) }
}

final class BudgetOnPostgresTests: BudgetTests {
    override class var backend: TestBackend { .postgres }
    func testRunsOnPostgres() throws { XCTAssertEqual(try openDatabase().dialect, .postgres) }
}

final class PhoneOwnershipOnPostgresTests: PhoneOwnershipTests {
    override class var backend: TestBackend { .postgres }
    func testRunsOnPostgres() throws { XCTAssertEqual(try openDatabase().dialect, .postgres) }
}

final class SharedDatabaseOnPostgresTests: SharedDatabaseTests {
    override class var backend: TestBackend { .postgres }
    func testRunsOnPostgres() throws { XCTAssertEqual(try openDatabase().dialect, .postgres) }
}

final class SendWindowOnPostgresTests: SendWindowTests {
    override class var backend: TestBackend { .postgres }
    func testRunsOnPostgres() throws { XCTAssertEqual(try openDatabase().dialect, .postgres) }
}

final class DeliveriesMigrationOnPostgresTests: DeliveriesMigrationTests {
    override class var backend: TestBackend { .postgres }
    func testRunsOnPostgres() throws { XCTAssertEqual(try openDatabase().dialect, .postgres) }
}

final class LiveCodeSlotOnPostgresTests: LiveCodeSlotTests {
    override class var backend: TestBackend { .postgres }
    func testRunsOnPostgres() throws { XCTAssertEqual(try openDatabase().dialect, .postgres) }
}

final class ErasureOnPostgresTests: ErasureTests {
    override class var backend: TestBackend { .postgres }
    func testRunsOnPostgres() throws { XCTAssertEqual(try openDatabase().dialect, .postgres) }
}
