import Foundation
import LineProtocol
import Secrets
import ServiceKit
import XCTest

@testable import Identity

/// A clock the test moves by hand.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var seconds: Int64

    init(_ start: Int64 = 1_800_000_000) { seconds = start }

    var now: Int64 {
        lock.lock()
        defer { lock.unlock() }
        return seconds
    }

    func advance(_ delta: Int64) {
        lock.lock()
        seconds += delta
        lock.unlock()
    }

    var identityClock: IdentityClock { IdentityClock { [self] in now } }
}

/// A fresh store in a temporary directory and a service on it, with cheap scrypt (log N 10).
class IdentityTestCase: XCTestCase {
    var directory = ""
    var clock = TestClock()
    var service: IdentityService!
    let caller = Caller(client: "203.0.113.7")
    static let password = "correct horse battery"

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "identity-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        clock = TestClock()
        service = try makeService()
    }

    override func tearDownWithError() throws {
        service = nil
        try? FileManager.default.removeItem(atPath: directory)
    }

    static func fastSettings() -> IdentitySettings {
        var settings = IdentitySettings()
        settings.scrypt = ScryptParameters(logN: 10, r: 8, p: 1)
        settings.policy = PasswordPolicy(breached: ["hunter2hunter2", "letmeinplease"])
        return settings
    }

    func makeService(_ adjust: (inout IdentitySettings) -> Void = { _ in }, file: String = "identity.sqlite") throws -> IdentityService {
        var settings = Self.fastSettings()
        adjust(&settings)
        let store = try IdentityStore(path: directory + "/" + file)
        return try IdentityService(store: store, settings: settings, clock: clock.identityClock)
    }

    @discardableResult
    func registerUser(_ username: String = "alice", email: String? = nil, phone: String = "5555550100", on target: IdentityService? = nil) throws -> String {
        try (target ?? service).register(
            .init(username: username, password: Self.password, email: email ?? "\(username)@example.com", phone: phone), caller: caller)
    }

    func login(_ username: String = "alice", password: String = IdentityTestCase.password, device: String = "iphone-1") throws -> LoginResult {
        try service.login(username: username, password: password, deviceID: device, caller: caller)
    }

    /// Logs in and elevates the session (as verification.check would), returning the result.
    func elevatedLogin(_ username: String = "alice", device: String = "iphone-1") throws -> LoginResult {
        var result = try login(username, device: device)
        _ = try service.elevate(sessionID: result.sessionID, factor: "sms", caller: caller)
        result.aal = 2
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
    func assertReason<T>(_ reason: String, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> T) -> RPCError? {
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
