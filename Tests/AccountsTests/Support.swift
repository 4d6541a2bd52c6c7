@testable import Accounts
import Foundation
import LineProtocol
import RPC
import StoreTestSupport
import TestSupport
import XCTest


/// Verification in memory: codes bound to payloads, single use, attempts counted.
final class FakeVerification: VerificationPort, @unchecked Sendable {
    struct Request {
        var userID: String
        var payload: [String: JSON]
        var code: String
        var verified = false
        var cancelled = false
        var attemptsLeft = 3
    }

    private let lock = NSLock()
    private var requests: [String: Request] = [:]
    private var counter = 0
    var failStart: RPCError?
    /// Runs after a code is started, before `start` returns (to race the caller).
    var afterStart: (@Sendable () -> Void)?
    /// Like the real service: one live (pending) code per user's phone.
    var oneLiveCodePerUser = false
    private(set) var startCount = 0

    func start(userID: String, provenPhone: String?, payload: [String: JSON], expirySeconds: Int64, context: CallContext?) throws(RPCError) -> String {
        let id = try startLocked(userID: userID, payload: payload)
        if let afterStart {
            self.afterStart = nil
            afterStart()
        }
        return id
    }

    private func startLocked(userID: String, payload: [String: JSON]) throws(RPCError) -> String {
        lock.lock()
        defer { lock.unlock() }
        if let failStart { throw failStart }
        if oneLiveCodePerUser, let live = requests.first(where: { $0.value.userID == userID && !$0.value.verified && !$0.value.cancelled }) {
            throw RPCError(.concurrentVerification, "busy", extra: ["request_id": .string(live.key)])
        }
        counter += 1
        startCount += 1
        let id = "vr_fake_\(counter)"
        requests[id] = Request(userID: userID, payload: payload, code: String(100_000 + counter))
        return id
    }

    func check(requestID: String, code: String, payload: [String: JSON], context: CallContext?) throws(RPCError) {
        lock.lock()
        defer { lock.unlock() }
        guard var request = requests[requestID] else { throw RPCError(.notFound, "no such request") }
        if request.verified { throw RPCError(.conflict, "already verified", extra: ["status": "verified"]) }
        if request.cancelled { throw RPCError(.conflict, "cancelled", extra: ["status": "cancelled"]) }
        if request.attemptsLeft == 0 { throw RPCError(.tooManyAttempts, "too many attempts") }
        guard request.code == code, request.payload == payload else {
            request.attemptsLeft -= 1
            requests[requestID] = request
            throw RPCError(.invalidCode, "wrong code", extra: ["attempts_left": .int(Int64(request.attemptsLeft))])
        }
        request.verified = true
        requests[requestID] = request
    }

    func isVerified(requestID: String, context: CallContext?) throws(RPCError) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return requests[requestID]?.verified ?? false
    }

    func cancel(requestID: String, context: CallContext?) throws(RPCError) {
        lock.lock()
        defer { lock.unlock() }
        guard let request = requests[requestID] else { throw RPCError(.notFound, "no such request") }
        guard !request.verified, !request.cancelled else { throw RPCError(.conflict, "finished") }
        requests[requestID]?.cancelled = true
    }

    /// The code the user's phone got, and the payload it names.
    func request(_ id: String) -> Request? {
        lock.lock()
        defer { lock.unlock() }
        return requests[id]
    }

    /// Forgets a request, as verification does once its code expired.
    func forget(_ id: String) {
        lock.lock()
        requests.removeValue(forKey: id)
        lock.unlock()
    }

    /// Marks a request verified without the service seeing the answer (a confirm cut short).
    func markVerified(_ id: String) {
        lock.lock()
        requests[id]?.verified = true
        lock.unlock()
    }
}

class AccountsTestCase: XCTestCase {
    /// Where this class's tests keep the ledger; each suite has a PostgreSQL twin that says `.postgres`.
    class var backend: TestBackend { .sqlite }
    var databases: TestDatabases!
    var store: SQLLedgerStore!
    var verification: FakeVerification!
    var clock: ManualClock!
    var service: AccountsService!

    override func setUpWithError() throws {
        databases = try TestDatabases(backend: Self.backend)
        try openService()
    }

    override func tearDownWithError() throws {
        service = nil
        store = nil
        databases?.removeAll()
    }

    /// Opens (or reopens, keeping the data) the ledger and a service over it.
    func openService(groupCommitMax: Int = 64) throws {
        let database = try databases.open("ledger", sqlite: LedgerSchema.sqlite, postgres: LedgerSchema.postgres)
        store = SQLLedgerStore(database: database, groupCommitMax: groupCommitMax)
        verification = FakeVerification()
        let clock = ManualClock()
        self.clock = clock
        service = AccountsService(store: store, verification: verification, clock: { clock.nowSeconds })
    }

    @discardableResult
    func fund(_ user: String, _ account: AccountName = .checking, _ amount: Int64, key: String? = nil) throws -> Int64 {
        try service.deposit(userID: user, account: account, amountMinor: amount, idempotencyKey: key ?? UUID().uuidString)
    }

    func transfer(_ user: String, _ from: AccountName, _ to: AccountName, _ amount: Int64, key: String? = nil) throws -> Transfer {
        try service.transfer(
            userID: user, TransferRequest(from: from, to: to, amountMinor: amount, idempotencyKey: key ?? UUID().uuidString),
            context: nil
        ).transfer
    }

    func code(for transfer: Transfer) -> String { verification.request(transfer.requestID!)!.code }

    func balance(_ user: String, _ account: AccountName) throws -> Int64 {
        try service.balances(userID: user).first { $0.name == account.rawValue }!.balanceMinor
    }

    func assertAuditClean(file: StaticString = #filePath, line: UInt = #line) throws {
        let breaches = try service.audit()
        XCTAssertEqual(breaches, [], file: file, line: line)
    }

    func assertThrows(_ expected: AccountsError, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            XCTAssertEqual(error as? AccountsError, expected, file: file, line: line)
        }
    }

    func assertReason(_ reason: Reason, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            let wire = (error as? RPCError) ?? (error as? RPCErrorConvertible)?.rpcError
            XCTAssertEqual(wire?.reason, reason, "\(error)", file: file, line: line)
        }
    }
}

/// The service's async methods, awaited on the calling thread: the tests call them from plain
/// (and many) threads; inside the closures the async methods themselves run.
extension AccountsService {
    func transfer(userID: String, _ request: TransferRequest, provenPhone: String? = nil, context: CallContext?) throws -> TransferTicket {
        try blocking { try await self.transfer(userID: userID, request, provenPhone: provenPhone, context: context) }
    }

    func confirm(userID: String, transferID: String, code: String, context: CallContext?) throws -> [AccountBalance] {
        try blocking { try await self.confirm(userID: userID, transferID: transferID, code: code, context: context) }
    }

    func confirmWithDeviceKey(
        userID: String, sessionDeviceID: String, transferID: String, deviceID: String, signature: String, context: CallContext?
    ) throws -> [AccountBalance] {
        try blocking {
            try await self.confirmWithDeviceKey(
                userID: userID, sessionDeviceID: sessionDeviceID, transferID: transferID, deviceID: deviceID, signature: signature, context: context)
        }
    }
}
