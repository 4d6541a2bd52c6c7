import Delivery
import Foundation
import LineProtocol
import Platform
import RPC
import Runtime
import ServiceKit
@testable import Verification
import XCTest


/// A fake identity on a real socket: what `identity.introspect`, `user`, `elevate`, `logout`,
/// `record` and `prove_phone` would answer for three users, and a log of what it saw. Alice and
/// Bob proved their phones; Mallory registered with Alice's number and never proved it.
/// `lks_alice`, `lks_bob` and `lks_mallory` owe SMS (aal 1); `lks_alice_strong` is Alice at aal 2.
final class FakeIdentity: @unchecked Sendable {
    private let lock = NSLock()
    private var elevations: [(String, String)] = []
    private var records: [(String, String)] = []
    private var logouts: [String] = []
    private var proofs: [(String, String)] = []
    private var profileReads = 0

    func register(on router: Router) {
        router.register("identity.introspect") { params, _ in
            switch try params.string("session") {
            case "lks_alice":
                return ["user_id": "u_alice", "session_id": "s_alice", "device_id": "d_1", "aal": 1, "aal2_at": nil, "expires_at": 4_000_000_000, "required_factors": ["sms"], "step_up_until": nil]
            case "lks_alice_strong":
                return ["user_id": "u_alice", "session_id": "s_alice_2", "device_id": "d_1", "aal": 2, "aal2_at": 1, "expires_at": 4_000_000_000, "required_factors": [], "step_up_until": 301]
            case "lks_bob":
                return ["user_id": "u_bob", "session_id": "s_bob", "device_id": "d_2", "aal": 1, "aal2_at": nil, "expires_at": 4_000_000_000, "required_factors": ["sms"], "step_up_until": nil]
            case "lks_mallory":
                return ["user_id": "u_mallory", "session_id": "s_mallory", "device_id": "d_3", "aal": 1, "aal2_at": nil, "expires_at": 4_000_000_000, "required_factors": ["sms"], "step_up_until": nil]
            default: throw RPCError(.unauthenticated, "the session is not valid")
            }
        }
        router.register("identity.logout") { [self] params, _ in
            let token = try params.string("session")
            lock.lock()
            logouts.append(token)
            lock.unlock()
            return ["ok": true]
        }
        router.register("identity.user") { [self] params, _ in
            lock.lock()
            profileReads += 1
            lock.unlock()
            switch try params.string("user_id") {
            case "u_alice":
                return ["user_id": "u_alice", "username": "alice", "email": "alice@example.com", "phone": "+15555550100", "sms_verification": true, "phone_verified": true, "email_verified": false]
            case "u_bob":
                return ["user_id": "u_bob", "username": "bob", "email": "bob@example.com", "phone": "+15555550199", "sms_verification": true, "phone_verified": true, "email_verified": false]
            case "u_mallory":
                return ["user_id": "u_mallory", "username": "mallory", "email": "m@example.com", "phone": "+15555550100", "sms_verification": false, "phone_verified": false, "email_verified": false]
            default: throw RPCError(.notFound, "no such user")
            }
        }
        router.register("identity.elevate") { [self] params, _ in
            lock.lock()
            elevations.append((try params.string("session_id"), try params.string("factor")))
            lock.unlock()
            return ["aal": 2]
        }
        router.register("identity.prove_phone") { [self] params, _ in
            lock.lock()
            proofs.append((try params.string("user_id"), try params.string("phone")))
            lock.unlock()
            return ["phone_verified": true]
        }
        router.register("identity.record") { [self] params, _ in
            lock.lock()
            records.append((try params.string("event"), try params.string("outcome")))
            lock.unlock()
            return ["ok": true]
        }
    }

    var elevated: [(String, String)] {
        lock.lock()
        defer { lock.unlock() }
        return elevations
    }

    /// `identity.user` calls so far.
    var profilesRead: Int {
        lock.lock()
        defer { lock.unlock() }
        return profileReads
    }

    var loggedOut: [String] {
        lock.lock()
        defer { lock.unlock() }
        return logouts
    }

    var proved: [(String, String)] {
        lock.lock()
        defer { lock.unlock() }
        return proofs
    }

    var recorded: [(String, String)] {
        lock.lock()
        defer { lock.unlock() }
        return records
    }
}

/// Verification's method table and a fake identity, each behind an `RPCServer` on port 0, on one loop.
final class PublicFormTests: VerificationTestCase {
    var harness: Harness!
    var identity: FakeIdentity!
    var loop: EventLoop!
    var workers: WorkerPool!
    var servers: [RPCServer] = []
    var verificationEndpoint: Endpoint!
    var loopThread: Thread!

    override func setUpWithError() throws {
        try super.setUpWithError()
        harness = try makeHarness()
        identity = FakeIdentity()
        loop = try EventLoop()
        workers = WorkerPool(threadCount: 4, maxQueued: 64, name: "test")
        let logger = Logger(service: "test", sink: LogSink())
        let identityRouter = Router(workers: workers, metrics: Metrics())
        identity.register(on: identityRouter)
        let identityServer = RPCServer(loop: loop, limits: ServerLimits(), dispatcher: identityRouter, logger: logger, replicaID: "identity", trustsCallerMeta: true)
        let identityAddress = try identityServer.listen(on: Endpoint(host: "127.0.0.1", port: 0))
        let client = RPCClient(loop: loop, service: "identity", endpoints: [Endpoint(host: "127.0.0.1", port: identityAddress.port)], logger: logger)
        let router = Router(workers: workers, metrics: Metrics())
        VerificationMethods(service: harness.service, identity: RPCIdentityDirectory(client: client)).register(on: router)
        let server = RPCServer(loop: loop, limits: ServerLimits(), dispatcher: router, logger: logger, replicaID: "test-1", trustsCallerMeta: true)
        verificationEndpoint = Endpoint(host: "127.0.0.1", port: try server.listen(on: Endpoint(host: "127.0.0.1", port: 0)).port)
        servers = [identityServer, server]
        let loop = self.loop!
        loopThread = Thread { loop.run() }
        loopThread.start()
    }

    override func tearDown() {
        let done = DispatchSemaphore(value: 0)
        let servers = self.servers
        loop.execute {
            for server in servers { server.forceClose() }
            done.signal()
        }
        done.wait()
        loop.stop()
        while !loopThread.isFinished { usleep(1000) }
        workers?.shutdownAndJoin()
        super.tearDown()
    }

    private func call(_ method: String, _ params: JSON) throws -> Result<JSON, RPCError> {
        try LineClient(verificationEndpoint).call(method, params).outcome
    }

    func testLoginFactorThroughTheSessionLiftsToAal2() throws {
        let start = try call("verification.start", ["session": "lks_alice", "channel": "sms"]).get()
        let id = try XCTUnwrap(start["request_id"]?.stringValue)
        let message = try XCTUnwrap(harness.provider.sent.last)
        XCTAssertEqual(message.to, "+15555550100", "the phone on the profile")
        let code = harness.code(id)
        XCTAssertEqual(try call("verification.check", ["session": "lks_alice", "request_id": .string(id), "code": .string(wrong(code))]).failureReason, "invalid_code")
        let answer = try call("verification.check", ["session": "lks_alice", "request_id": .string(id), "code": .string(code)]).get()
        XCTAssertEqual(answer, ["status": "verified", "aal": 2])
        XCTAssertEqual(identity.elevated.map(\.0), ["s_alice"])
        XCTAssertEqual(identity.elevated.map(\.1), ["sms"])
        XCTAssertEqual(identity.recorded.map(\.0), ["factor.failed", "factor.passed"])
        let status = try call("verification.status", ["request_id": .string(id)]).get()
        XCTAssertEqual(status["purpose"], "login")
        XCTAssertEqual(status["user_id"], "u_alice")
    }

    func testAnotherUsersRequestIsNotFoundAndEmailIsNoLoginFactor() throws {
        let id = try XCTUnwrap(try call("verification.start", ["session": "lks_alice"]).get()["request_id"]?.stringValue)
        XCTAssertEqual(harness.provider.sent.last?.channel, .sms, "the public workflow starts with SMS")
        let code = harness.code(id)
        XCTAssertEqual(try call("verification.check", ["session": "lks_bob", "request_id": .string(id), "code": .string(code)]).failureReason, "not_found")
        XCTAssertEqual(try call("verification.cancel", ["session": "lks_bob", "request_id": .string(id)]).failureReason, "not_found")
        XCTAssertEqual(try call("verification.start", ["session": "lks_bob", "channel": "email"]).failureReason, "invalid_params")
        XCTAssertEqual(try call("verification.start", ["session": "lks_bob", "number": "+15555550111"]).failureReason, "invalid_params")
        XCTAssertEqual(try call("verification.start", ["session": "lks_nobody"]).failureReason, "unauthenticated")
        XCTAssertEqual(try call("verification.next", ["session": "lks_alice", "request_id": .string(id)]).get(), ["status": "pending", "channel": "voice"])
        XCTAssertEqual(try call("verification.cancel", ["session": "lks_alice", "request_id": .string(id)]).get(), ["status": "cancelled"])
    }

    func testPublicCheckRefusesATransactionRequest() throws {
        let start = try call("verification.start", [
            "user_id": "u_alice", "purpose": "transaction", "channel": "sms",
            "payload": ["amount": 5000, "currency": "USD", "from": "checking", "to": "saving"],
        ]).get()
        let id = try XCTUnwrap(start["request_id"]?.stringValue)
        XCTAssertTrue(harness.provider.sent.last!.text.contains("to move 50.00 USD from checking to saving"))
        let code = harness.code(id)
        XCTAssertEqual(try call("verification.check", ["session": "lks_alice", "request_id": .string(id), "code": .string(code)]).failureReason, "not_found")
        let answer = try call("verification.check", [
            "request_id": .string(id), "code": .string(code),
            "payload": ["amount": 5000, "currency": "USD", "from": "checking", "to": "saving"],
        ]).get()
        XCTAssertEqual(answer, ["status": "verified", "user_id": "u_alice"])
    }

    /// Accounts reads the proven phone with the session and passes it on: the start reads no
    /// profile. Without it, verification reads the profile, whose proof still rules.
    func testAnInternalStartGivenTheProvenNumberReadsNoProfile() throws {
        let transfer: [String: JSON] = ["purpose": "transaction", "channel": "sms", "payload": ["amount": 100, "from": "checking", "to": "saving"]]
        var given = transfer
        given["user_id"] = "u_bob"
        given["proven_number"] = "+15555550199"
        let id = try XCTUnwrap(try call("verification.start", .object(given)).get()["request_id"]?.stringValue)
        XCTAssertEqual(identity.profilesRead, 0, "the caller gave the proven phone")
        XCTAssertEqual(harness.provider.sent.last?.to, "+15555550199")
        XCTAssertEqual(try call("verification.status", ["request_id": .string(id)]).get()["user_id"], "u_bob")

        var looked = transfer
        looked["user_id"] = "u_alice"
        XCTAssertNotNil(try call("verification.start", .object(looked)).get()["request_id"])
        XCTAssertEqual(identity.profilesRead, 1, "no proven phone given: the profile is read")
        XCTAssertEqual(harness.provider.sent.last?.to, "+15555550100")

        looked["user_id"] = "u_mallory"
        XCTAssertEqual(try call("verification.start", .object(looked)).failureReason, "invalid_params", "the profile's phone is unproven")
        var alone = transfer
        alone["proven_number"] = "+15555550199"
        guard case .failure(let refusal) = try call("verification.start", .object(alone)) else { return XCTFail("a proven number belongs to a user") }
        XCTAssertEqual(refusal.reason, .invalidParams)
        XCTAssertEqual(refusal.data?["field"], "proven_number")
        XCTAssertEqual(harness.provider.sent.count, 2, "nothing sent for the refusals")
    }

    func testTooManyWrongLoginCodesEndTheSessionThatOwesTheFactor() throws {
        for (token, ends) in [("lks_alice", true), ("lks_alice_strong", false)] {
            let id = try XCTUnwrap(try call("verification.start", ["session": .string(token)]).get()["request_id"]?.stringValue)
            let bad = wrong(harness.code(id))
            for attempt in 1...3 {
                let reason = try call("verification.check", ["session": .string(token), "request_id": .string(id), "code": .string(bad)]).failureReason
                XCTAssertEqual(reason, attempt < 3 ? "invalid_code" : "too_many_attempts", token)
            }
            XCTAssertEqual(identity.loggedOut.contains(token), ends, token)
        }
        XCTAssertEqual(identity.loggedOut, ["lks_alice"], "only the session that owes a factor it can no longer pass")
    }

    func testASessionThatOwesAFactorTouchesOnlyLoginRequests() throws {
        let start = try call("verification.start", [
            "user_id": "u_alice", "purpose": "transaction", "channel": "sms", "payload": ["amount": 100, "from": "checking", "to": "saving"],
        ]).get()
        let id = try XCTUnwrap(start["request_id"])
        XCTAssertEqual(try call("verification.next", ["session": "lks_alice", "request_id": id]).failureReason, "not_found")
        XCTAssertEqual(try call("verification.cancel", ["session": "lks_alice", "request_id": id]).failureReason, "not_found")
        XCTAssertEqual(try call("verification.cancel", ["session": "lks_alice_strong", "request_id": id]).get(), ["status": "cancelled"])
    }

    /// Every form refuses a name it does not take (before, check, cancel, next and the
    /// internal start ignored one), naming it, before any work is done.
    func testEachFormRefusesANameItDoesNotTake() throws {
        let id = try XCTUnwrap(try call("verification.start", ["session": "lks_alice"]).get()["request_id"])
        let sent = harness.provider.sent.count
        let cases: [(String, JSON, String)] = [
            ("verification.start", ["session": "lks_alice", "chanel": "voice"], "chanel"),
            ("verification.start", ["session": "lks_alice", "payload": ["amount": 1]], "payload"),
            ("verification.start", ["purpose": "transaction", "numbr": "+15555550123"], "numbr"),
            ("verification.check", ["session": "lks_alice", "request_id": id, "code": "000000", "cod": "1"], "cod"),
            ("verification.check", ["request_id": id, "code": "000000", "session_id": "s"], "session_id"),
            ("verification.cancel", ["session": "lks_alice", "request_id": id, "reason": "x"], "reason"),
            ("verification.next", ["session": "lks_alice", "request_id": id, "channel": "voice"], "channel"),
            ("verification.status", ["request_id": id, "verbose": true], "verbose"),
        ]
        for (method, params, field) in cases {
            guard case .failure(let error) = try call(method, params) else { XCTFail("\(method) took \(field)"); continue }
            XCTAssertEqual(error.reason, .invalidParams, "\(method) \(field)")
            XCTAssertEqual(error.data?["field"]?.stringValue, field, "\(method)")
        }
        XCTAssertEqual(harness.provider.sent.count, sent, "nothing sent")
        XCTAssertEqual(try call("verification.status", ["request_id": id]).get()["status"], "pending", "nothing checked or cancelled")
    }

    func testInternalStartErrorsOnTheWire() throws {
        let first = try call("verification.start", ["number": "+15555550123", "purpose": "transaction"]).get()
        let refused = try call("verification.start", ["number": "+15555550123", "purpose": "transaction"])
        guard case .failure(let error) = refused else { return XCTFail("expected concurrent_verification") }
        XCTAssertEqual(error.reason, .concurrentVerification)
        XCTAssertEqual(error.code, 409)
        XCTAssertEqual(error.data?["request_id"], first["request_id"])
        XCTAssertEqual(try call("verification.start", ["number": "+15555550124"]).failureReason, "invalid_params")
        XCTAssertEqual(try call("verification.start", ["number": "+15555550124", "purpose": "login", "workflow": "nope"]).failureReason, "invalid_params")
    }
}

extension PublicFormTests {
    func testAStrangersCodesToTheOwnersNumberNeitherBlockNorDrainTheOwner() throws {
        // Mallory registered with Alice's number and asks for codes, cancelling each (the budget attack).
        var mallorys: [String] = []
        for _ in 0..<3 {
            guard case .success(let started) = try call("verification.start", ["session": "lks_mallory", "channel": "sms"]),
                let id = started["request_id"]?.stringValue
            else { continue }
            mallorys.append(id)
            _ = try call("verification.cancel", ["session": "lks_mallory", "request_id": .string(id)])
        }
        let live = try call("verification.start", ["session": "lks_mallory", "channel": "sms"])
        if case .success(let started) = live, let id = started["request_id"]?.stringValue { mallorys.append(id) }
        XCTAssertFalse(mallorys.isEmpty, "a stranger still gets the proof code")

        let alice = try call("verification.start", ["session": "lks_alice", "channel": "sms"])
        guard case .success(let started) = alice, let aliceID = started["request_id"]?.stringValue else {
            return XCTFail("the owner's code is blocked by a stranger's requests: \(alice)")
        }
        // One live code per user and number: Alice's second start names her own request only.
        guard case .failure(let busy) = try call("verification.start", ["session": "lks_alice", "channel": "sms"]) else {
            return XCTFail("expected concurrent_verification")
        }
        XCTAssertEqual(busy.reason, .concurrentVerification)
        XCTAssertEqual(busy.data?["request_id"], .string(aliceID))
        // And nothing Mallory gets back names Alice's request.
        let again = try call("verification.start", ["session": "lks_mallory", "channel": "sms"])
        if case .failure(let error) = again {
            XCTAssertNotEqual(error.data?["request_id"], .string(aliceID), "a stranger learns the owner's request id")
            XCTAssertTrue(mallorys.contains(error.data?["request_id"]?.stringValue ?? mallorys.last ?? ""), "\(error)")
        }
    }

    func testAProofCodeProvesThePhoneAndLiftsTheSession() throws {
        let start = try call("verification.start", ["session": "lks_mallory", "channel": "sms"]).get()
        let id = try XCTUnwrap(start["request_id"]?.stringValue)
        XCTAssertEqual(start["purpose"], "phone_proof")
        XCTAssertEqual(try call("verification.status", ["request_id": .string(id)]).get()["purpose"], "phone_proof")
        let answer = try call("verification.check", ["session": "lks_mallory", "request_id": .string(id), "code": .string(harness.code(id))]).get()
        XCTAssertEqual(answer, ["status": "verified", "aal": 2, "phone_verified": true])
        XCTAssertEqual(identity.proved.map(\.0), ["u_mallory"])
        XCTAssertEqual(identity.proved.map(\.1), ["+15555550100"], "the proof names the number the code went to")
        XCTAssertEqual(identity.elevated.map(\.0), ["s_mallory"])
        // A proven owner's login code is a plain login factor.
        XCTAssertEqual(try call("verification.start", ["session": "lks_alice", "channel": "sms"]).get()["purpose"], "login")
    }

    func testAnUnprovenNumberGetsNothingButTheProofCode() throws {
        let refused = try call("verification.start", [
            "user_id": "u_mallory", "purpose": "transaction", "channel": "sms", "payload": ["amount": 5000, "currency": "USD"],
        ])
        guard case .failure(let error) = refused else { return XCTFail("a transaction code went to an unproven number") }
        XCTAssertEqual(error.reason, .invalidParams)
        XCTAssertEqual(error.data?["rule"], "phone_not_proven")
        XCTAssertEqual(try call("verification.start", ["user_id": "u_mallory", "purpose": "login", "channel": "voice"]).failureReason, "invalid_params")
        XCTAssertTrue(harness.provider.sent.isEmpty, "nothing was sent")
        // The proven owner of the same number gets hers.
        XCTAssertNotNil(try call("verification.start", ["user_id": "u_alice", "purpose": "transaction", "channel": "sms"]).get()["request_id"])
    }
}

extension Result where Failure == RPCError {
    var failureReason: String? {
        if case .failure(let error) = self { return error.reasonText }
        return nil
    }
}
