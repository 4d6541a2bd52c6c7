import Foundation
import Storage
import StoreTestSupport
import TestSupport
import XCTest

@testable import Identity

/// Every statement of identity's hot paths (login and its throttles, sessions, introspection,
/// the second factor, logout) reads through an index (SQLite's plan says SEARCH, never SCAN)
/// and sorts nothing: their cost does not grow with users, sessions or the audit trail.
final class QueryPlanTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "identity-plans-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testLoginSessionsAndFactorsReadByIndex() throws {
        let recorder = QueryPlanRecorder(try Database(path: directory + "/i.sqlite", migrations: IdentityMigrations.sqlite))
        let clock = ManualClock()
        let service = try IdentityService(
            store: IdentityStore(database: recorder), settings: IdentityTestCase.fastSettings(), clock: clock.identityClock)
        let caller = Caller(client: "203.0.113.7")
        for name in ["alice", "bob"] {
            _ = try service.register(.init(username: name, password: IdentityTestCase.password, email: "\(name)@example.com", phone: "5555550100"), caller: caller)
            for device in ["iphone-1", "iphone-2"] {
                _ = try service.login(username: name, password: IdentityTestCase.password, deviceID: device, caller: caller)
                clock.advance(seconds: 1)
            }
        }
        _ = recorder.take()

        XCTAssertThrowsError(try service.login(username: "alice", password: "wrong password here", deviceID: "iphone-1", caller: caller))
        XCTAssertThrowsError(try service.login(username: "nobody", password: "wrong password here", deviceID: "iphone-1", caller: caller))
        let login = try service.login(username: "alice", password: IdentityTestCase.password, deviceID: "iphone-1", caller: caller)
        _ = try service.elevate(sessionID: login.sessionID, factor: "sms", caller: caller)
        _ = try service.introspect(token: login.session)
        _ = try service.sessions(token: login.session)
        try service.logout(token: login.session, caller: caller)
        let plans = recorder.take()

        XCTAssertGreaterThan(plans.count, 20, "the paths ran")
        for plan in plans {
            XCTAssertEqual(plan.scans, [], "\(plan)")
            // Device tokens sort at most the per-user cap of rows (the statement trims them to it).
            if !plan.touches("device_tokens") { XCTAssertEqual(plan.sorts, [], "\(plan)") }
        }
        // A login drops the user's audit events past retention by time, not by reading the trail.
        let trimmed = plans.filter { $0.sql.hasPrefix("DELETE FROM audit_events") }
        XCTAssertFalse(trimmed.isEmpty)
        for plan in trimmed { XCTAssertTrue(plan.details.contains { $0.contains("user_id=? AND at<?") }, "\(plan)") }
    }
}
