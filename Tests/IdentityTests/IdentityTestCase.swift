import Foundation
@testable import Identity
import LineProtocol
import Secrets
import StoreTestSupport
import TestSupport
import XCTest


extension ManualClock {
    /// The clock as identity reads it (seconds).
    var identityClock: IdentityClock { IdentityClock { [self] in nowSeconds } }
}

extension IdentityService {
    /// scrypt runs so far (`identity.password_checks`).
    var passwordChecks: Int { Int(metrics.counter(Self.passwordChecksCounter)) }
}

/// A fresh store and a service on it, with cheap scrypt (log N 10), on a SQLite file in a
/// temporary directory, or on PostgreSQL in schemas of its own when LATCHKEY_TEST_BACKEND is
/// `postgres` (`.ci/run` runs these suites a second time that way): one body, both backends.
class IdentityTestCase: XCTestCase {
    var directory = ""
    var clock = ManualClock()
    var service: IdentityService!
    var databases: TestDatabases!
    let caller = Caller(client: "203.0.113.7")
    static let password = "correct horse battery"

    var backend: TestBackend { databases.backend }

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "identity-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        databases = try TestDatabases(directory: directory)
        clock = ManualClock()
        service = try makeService()
    }

    override func tearDownWithError() throws {
        service = nil
        databases?.removeAll()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The identity database `name` on this pass's backend (the same name reopens the same data).
    func openStore(_ name: String = "identity", migrations: Int? = nil) throws -> IdentityStore {
        let sqlite = migrations.map { Array(IdentityMigrations.sqlite.prefix($0)) } ?? IdentityMigrations.sqlite
        let postgres = migrations.map { Array(IdentityMigrations.postgres.prefix($0)) } ?? IdentityMigrations.postgres
        return IdentityStore(database: try databases.open(name, sqlite: sqlite, postgres: postgres))
    }

    static func fastSettings() -> IdentitySettings {
        var settings = IdentitySettings()
        settings.scrypt = ScryptParameters(logN: 10, r: 8, p: 1)
        settings.policy = PasswordPolicy(breached: ["hunter2hunter2", "letmeinplease"])
        return settings
    }

    func makeService(
        _ adjust: (inout IdentitySettings) -> Void = { _ in }, database: String = "identity", notices: UserNotices = .none
    ) throws -> IdentityService {
        var settings = Self.fastSettings()
        adjust(&settings)
        return try IdentityService(store: try openStore(database), settings: settings, clock: clock.identityClock, notices: notices)
    }

    @discardableResult
    func registerUser(_ username: String = "alice", email: String? = nil, phone: String = "5555550100", on target: IdentityService? = nil) throws -> String {
        try (target ?? service).register(
            .init(username: username, password: Self.password, email: email ?? "\(username)@example.com", phone: phone), caller: caller)
    }

    /// Puts another phone on the profile straight in the file, as an edit of the profile would.
    func changePhone(of userID: String, to phone: String) throws {
        _ = try service.store.database.write { c in try c.run("UPDATE users SET phone = ? WHERE user_id = ?", [.text(phone), .text(userID)]) }
    }

    func login(
        _ username: String = "alice", password: String = IdentityTestCase.password, device: String = "iphone-1", token: String? = nil,
        from caller: Caller? = nil
    ) throws -> LoginResult {
        try service.login(username: username, password: password, deviceID: device, deviceToken: token, caller: caller ?? self.caller)
    }

    /// Logs in as the app does (sending the device token it keeps for this user and device, and
    /// keeping the one the answer gives) and elevates the session, as verification.check would:
    /// from then on `appLogin` on that device finds it trusted.
    func elevatedLogin(_ username: String = "alice", device: String = "iphone-1") throws -> LoginResult {
        var result = try appLogin(username, device: device)
        _ = try service.elevate(sessionID: result.sessionID, factor: "sms", caller: caller)
        result.aal = 2
        return result
    }

    /// The device tokens the app keeps, by username and device.
    private var appTokens: [String: String] = [:]

    /// A password login as the app makes it: with the device token it kept from its last login
    /// on this device, keeping the next one (`login` sends none, as a new install or a stranger).
    func appLogin(_ username: String = "alice", password: String = IdentityTestCase.password, device: String = "iphone-1") throws -> LoginResult {
        let key = username + "/" + device
        let result = try login(username, password: password, device: device, token: appTokens[key])
        if let next = result.deviceToken { appTokens[key] = next }
        return result
    }

    /// Asserts `body` throws `expected`.
    func assertIdentityError<T>(_ expected: IdentityError, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> T) {
        do {
            _ = try body()
            XCTFail("expected \(expected), nothing was thrown", file: file, line: line)
        } catch let error as IdentityError {
            XCTAssertEqual(error, expected, file: file, line: line)
        } catch {
            XCTFail("expected \(expected), got \(error)", file: file, line: line)
        }
    }

    /// Asserts `body` throws an error whose wire reason is `reason` (and returns the RPC error).
    @discardableResult
    func assertReason<T>(_ reason: Reason, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> T) -> RPCError? {
        do {
            _ = try body()
            XCTFail("expected \(reason), nothing was thrown", file: file, line: line)
        } catch let error as IdentityError {
            XCTAssertEqual(error.rpcError.reason, reason, "\(error)", file: file, line: line)
            return error.rpcError
        } catch let error as RPCError {
            XCTAssertEqual(error.reason, reason, "\(error)", file: file, line: line)
            return error
        } catch {
            XCTFail("expected \(reason), got \(error)", file: file, line: line)
        }
        return nil
    }
}
