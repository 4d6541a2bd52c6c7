import Foundation
@testable import Gateway
import LineProtocol
import Platform
import RPC
import ServerTestSupport
import ServiceKit
import TestSupport
import XCTest


final class SessionAndRoutingTests: XCTestCase {
    private var loopThread: LoopThread!
    private var gateway: GatewayUnderTest?
    private var identity: FakeService!

    override func setUpWithError() throws {
        loopThread = try LoopThread()
        identity = try FakeService(service: "identity", replicaID: "identity-1", loopThread: loopThread)
        identity.addSession(token: "lks_alice", sessionID: "s-alice", aal: 1)
        identity.addSession(token: "lks_alice_phone", sessionID: "s-alice-phone", aal: 1)
    }

    override func tearDown() {
        gateway?.shutdown()
        loopThread?.shutdown()
        gateway = nil
        loopThread = nil
        identity = nil
    }

    private func start(_ endpoints: [String: [Endpoint]], settings: GatewaySettings = .unlimitedForTests, limits: ServerLimits = ServerLimits()) throws -> GatewayUnderTest {
        let started = try GatewayUnderTest(endpoints: endpoints, settings: settings, limits: limits)
        gateway = started
        return started
    }

    // MARK: Session cache

    func testIntrospectionIsCachedAndLogoutDropsItAtOnce() throws {
        let gateway = try start(["identity": [identity.endpoint]])
        let client = try gateway.client()
        for _ in 0..<5 { XCTAssertNotNil(try client.call("identity.sessions", ["session": "lks_alice"]).result) }
        XCTAssertEqual(identity.log.count("identity.introspect"), 1, "one introspection serves the burst")
        XCTAssertEqual(identity.log.count("identity.sessions"), 5)

        XCTAssertNotNil(try client.call("identity.logout", ["session": "lks_alice"]).result)
        let after = try client.call("identity.sessions", ["session": "lks_alice"])
        XCTAssertEqual(after.reason, "unauthenticated")
        XCTAssertEqual(after.error?.code, 401)
        XCTAssertEqual(identity.log.count("identity.sessions"), 5, "the logged-out token never reached the service again")
    }

    func testRevokeBySessionIDDropsThatSessionsEntry() throws {
        identity.addSession(token: "lks_alice", sessionID: "s-alice", aal: 2)  // revoking another session needs a recent step-up
        let gateway = try start(["identity": [identity.endpoint]])
        let client = try gateway.client()
        XCTAssertNotNil(try client.call("identity.keys", ["session": "lks_alice_phone"]).result)
        XCTAssertNotNil(try client.call("identity.keys", ["session": "lks_alice"]).result)
        // The fake's revoke does not end sessions, so end it by hand as identity would.
        identity.endSessions(id: "s-alice-phone")
        XCTAssertNotNil(try client.call("identity.revoke", ["session": "lks_alice", "session_id": "s-alice-phone"]).result)
        XCTAssertEqual(try client.call("identity.keys", ["session": "lks_alice_phone"]).reason, "unauthenticated")
        XCTAssertNotNil(try client.call("identity.keys", ["session": "lks_alice"]).result, "the caller's own entry stays")
    }

    func testCacheEntriesExpireAfterTheConfiguredTime() throws {
        var settings = GatewaySettings.unlimitedForTests
        settings.sessionCacheMilliseconds = 150
        let gateway = try start(["identity": [identity.endpoint]], settings: settings)
        let client = try gateway.client()
        _ = try client.call("identity.keys", ["session": "lks_alice"])
        identity.endSession("lks_alice")
        XCTAssertNotNil(try client.call("identity.keys", ["session": "lks_alice"]).result, "still cached")
        // The cache's clock is injected in testSessionCacheKeepsOnlyHashes; here: the entry does go, on its own.
        try waitUntil("the cached entry expires", pollMilliseconds: 50) {
            try client.call("identity.keys", ["session": "lks_alice"]).reason == "unauthenticated"
        }
    }

    func testSecondFactorRefreshesTheCachedAAL() throws {
        let gateway = try start(["identity": [identity.endpoint]])
        let client = try gateway.client()
        XCTAssertEqual(try client.call("identity.enroll_key", ["session": "lks_alice"]).reason, "step_up_required")
        identity.addSession(token: "lks_alice", sessionID: "s-alice", aal: 2)
        // verify_key raises aal: the gateway must not keep serving the stale aal 1.
        XCTAssertNotNil(try client.call("identity.verify_key", ["session": "lks_alice"]).result)
        XCTAssertEqual(try client.call("identity.enroll_key", ["session": "lks_alice"]).result?["served"]?.stringValue, "identity.enroll_key")
    }

    func testStepUpIsRefusedOnlyOnAFreshAnswer() throws {
        let gateway = try start(["identity": [identity.endpoint]])
        let client = try gateway.client()
        XCTAssertNotNil(try client.call("identity.keys", ["session": "lks_alice"]).result)
        XCTAssertEqual(identity.log.count("identity.introspect"), 1)
        // The second factor passed out of the gateway's sight (another door, or a service's own call).
        identity.addSession(token: "lks_alice", sessionID: "s-alice", aal: 2)
        XCTAssertEqual(try client.call("identity.enroll_key", ["session": "lks_alice"]).result?["served"]?.stringValue, "identity.enroll_key")
        XCTAssertEqual(identity.log.count("identity.introspect"), 2)
        // At aal 2 the cache answers again.
        XCTAssertNotNil(try client.call("identity.enroll_key", ["session": "lks_alice"]).result)
        XCTAssertNotNil(try client.call("identity.keys", ["session": "lks_alice"]).result)
        XCTAssertLessThanOrEqual(identity.log.count("identity.introspect"), 3)
    }

    func testSessionCacheKeepsOnlyHashes() {
        let cache = SessionCache(ttlMilliseconds: 1000)
        cache.store(token: "lks_secret", info: SessionInfo(userID: "u", sessionID: "s", deviceID: "", aal: 1, expiresAt: 4_000_000_000))
        XCTAssertEqual(SessionCache.key(forToken: "lks_secret").count, 32)
        XCTAssertEqual(cache.lookup(token: "lks_secret")?.sessionID, "s")
        XCTAssertNil(cache.lookup(token: "lks_other"))
        XCTAssertNil(cache.lookup(token: "lks_secret", nowMilliseconds: MonotonicClock.nowMilliseconds() + 1001))
    }

    func testIdentityDownGivesUnavailableNotUnauthenticated() throws {
        try identity.crash()
        let gateway = try start(["identity": [identity.endpoint]])
        let client = try gateway.client()
        // `unavailable`, not `timeout`: the refused connection is the answer, nobody waits for a clock.
        XCTAssertEqual(try client.call("accounts.balances", ["session": "lks_alice"]).reason, "unavailable")
    }

    // MARK: Rate limits

    func testRateLimitPerAddressAndGroupAnswersRetryAfter() throws {
        var settings = GatewaySettings.unlimitedForTests
        settings.rateLimits = RateLimits.parse("auth=1:3,default=0:0")!
        let gateway = try start(["identity": [identity.endpoint]], settings: settings)
        let client = try gateway.client()
        for _ in 0..<3 { XCTAssertNotNil(try client.call("identity.login", ["username": "a"]).result) }
        let limited = try client.call("identity.login", ["username": "a"])
        XCTAssertEqual(limited.reason, "rate_limited")
        XCTAssertEqual(limited.error?.code, 429)
        XCTAssertGreaterThanOrEqual(limited.error?.data?["retry_after"]?.intValue ?? 0, 1)
        XCTAssertEqual(identity.log.count("identity.login"), 3)
        // Another group is not affected.
        XCTAssertNotNil(try client.call("identity.keys", ["session": "lks_alice"]).result)
        XCTAssertNotNil(try client.call("gateway.ping").result)
    }

    func testTokenBucketRefills() {
        let limiter = RateLimiter(limits: ["auth": RateLimit(ratePerSecond: 2, burst: 2)])
        XCTAssertNil(limiter.take(client: "a", group: "auth", nowMilliseconds: 0))
        XCTAssertNil(limiter.take(client: "a", group: "auth", nowMilliseconds: 0))
        XCTAssertEqual(limiter.take(client: "a", group: "auth", nowMilliseconds: 0), 1)
        XCTAssertNil(limiter.take(client: "b", group: "auth", nowMilliseconds: 0), "per address")
        XCTAssertNil(limiter.take(client: "a", group: "auth", nowMilliseconds: 600))
        XCTAssertNil(RateLimits.parse("nope=1:1"))
        XCTAssertNil(RateLimits.parse("auth=1"))
        XCTAssertEqual(RateLimits.parse("auth=5:10")?["auth"], RateLimit(ratePerSecond: 5, burst: 10))
    }

    /// What the gateway's routes work out once must agree with `take`: a group with a limit of
    /// rate 0 is unlimited, and a group without one of its own is limited like the default group.
    func testUnlimitedGroupsAgreeWithTake() {
        let limiter = RateLimiter(limits: ["ping": RateLimit(ratePerSecond: 0, burst: 0), "default": RateLimit(ratePerSecond: 1, burst: 1)])
        XCTAssertTrue(limiter.isUnlimited(group: "ping"))
        XCTAssertTrue((0..<100).allSatisfy { _ in limiter.take(client: "a", group: "ping", nowMilliseconds: 0) == nil })
        XCTAssertFalse(limiter.isUnlimited(group: "default"))
        XCTAssertFalse(limiter.isUnlimited(group: "auth"), "no limit of its own: the default group's")
        XCTAssertNil(limiter.take(client: "a", group: "auth", nowMilliseconds: 0))
        XCTAssertEqual(limiter.take(client: "a", group: "auth", nowMilliseconds: 0), 1)
    }

    // MARK: Replicas

    func testVerificationChecksGoToTheReplicaNamedInTheRequestIDAndStartsSpread() throws {
        let replicaA = try FakeService(service: "verification", replicaID: "va", loopThread: loopThread)
        let replicaB = try FakeService(service: "verification", replicaID: "vb", loopThread: loopThread)
        let gateway = try start(["identity": [identity.endpoint], "verification": [replicaA.endpoint, replicaB.endpoint]])
        try gateway.waitUntilUp("verification", replicas: 2)
        let client = try gateway.client()
        for index in 0..<10 {
            let owner = index % 3 == 0 ? "va" : "vb"
            let answer = try client.call("verification.check", ["session": "lks_alice", "request_id": .string("vr_\(owner)_\(index)"), "code": "123456"])
            XCTAssertEqual(answer.result?["replica"]?.stringValue, owner)
        }
        XCTAssertEqual(replicaA.log.count("verification.check"), 4)
        XCTAssertEqual(replicaB.log.count("verification.check"), 6)
        for _ in 0..<10 { XCTAssertNotNil(try client.call("verification.start", ["session": "lks_alice"]).result) }
        XCTAssertEqual(replicaA.log.count("verification.start"), 5)
        XCTAssertEqual(replicaB.log.count("verification.start"), 5)
    }

    func testReadsFailOverAndTheDeadReplicaLeavesAndRejoinsRotation() throws {
        let second = try FakeService(service: "identity", replicaID: "identity-2", loopThread: loopThread)
        second.addSession(token: "lks_alice", sessionID: "s-alice", aal: 1)
        let gateway = try start(["identity": [identity.endpoint, second.endpoint]])
        try gateway.waitUntilUp("identity", replicas: 2)
        let client = try gateway.client()
        for _ in 0..<4 { XCTAssertNotNil(try client.call("identity.sessions", ["session": "lks_alice"]).result) }
        try identity.crash()
        for _ in 0..<20 {
            let answer = try client.call("identity.sessions", ["session": "lks_alice"])
            XCTAssertEqual(answer.result?["replica"]?.stringValue, "identity-2")
        }
        let down = gateway.gateway.pools["identity"]!.statuses.first { $0.address.port == identity.port }
        XCTAssertEqual(down?.state, .down)
        XCTAssertEqual(gateway.gateway.healthJSON["status"]?.stringValue, "degraded")
    }

    func testWritesWithoutIdempotencyKeyAreNotRepeatedButFailFast() throws {
        let busy = Blocker()
        defer { busy.release() }
        identity.holding = busy
        let gateway = try start(["identity": [identity.endpoint]])
        try gateway.waitUntilUp("identity", replicas: 1)
        let client = try gateway.client()
        XCTAssertTrue(client.send(raw: #"{"jsonrpc":"2.0","id":1,"method":"identity.register","params":{"username":"x"}}"# + "\n"))
        XCTAssertTrue(busy.waitUntilHeld(), "the register is in flight")
        try identity.crash()
        // Fast: answered while the replica still holds the call, so neither a late answer nor a timeout.
        let line = try XCTUnwrap(client.readLine())
        XCTAssertTrue(line.contains(#""reason":"unavailable""#), line)
        XCTAssertFalse(line.contains("sent"), "internal details stay inside")
    }

    func testATransferMovesToAnotherReplicaOnlyWhenItCarriesAnIdempotencyKey() throws {
        let replicas = try ["accounts-a", "accounts-b", "accounts-c"].map {
            try FakeService(service: "accounts", replicaID: $0, loopThread: loopThread)
        }
        let gateway = try start(["identity": [identity.endpoint], "accounts": replicas.map(\.endpoint)])
        try gateway.waitUntilUp("accounts", replicas: 3)
        let client = try gateway.client()
        /// Sends `line` while every replica holds what it gets, and returns the one holding it.
        func inFlight(_ line: String, holding busy: Blocker) throws -> FakeService {
            for replica in replicas { replica.holding = busy }
            XCTAssertTrue(client.send(raw: line + "\n"))
            XCTAssertTrue(busy.waitUntilHeld(), "the transfer is in flight")
            return try XCTUnwrap(replicas.first { $0.log.count("accounts.transfer") == 1 && $0.log.lastContext != nil && !$0.crashed })
        }
        // Sent, then its replica dies: with a key, the service deduplicates, so the gateway moves it.
        let firstBusy = Blocker()
        defer { firstBusy.release() }
        let first = try inFlight(#"{"jsonrpc":"2.0","id":1,"method":"accounts.transfer","params":{"session":"lks_alice","amount":5,"idempotency_key":"k1"}}"#, holding: firstBusy)
        try first.crash()
        firstBusy.release()  // the replica it moves to answers
        let keyed = try XCTUnwrap(client.readLine())
        XCTAssertTrue(keyed.contains(#""served":"accounts.transfer""#), keyed)
        XCTAssertFalse(keyed.contains(first.replicaID), keyed)
        // Without a key it could run twice: the client gets `unavailable`, fast.
        for replica in replicas where !replica.crashed { replica.resetLog() }
        let secondBusy = Blocker()
        defer { secondBusy.release() }
        let second = try inFlight(#"{"jsonrpc":"2.0","id":2,"method":"accounts.transfer","params":{"session":"lks_alice","amount":5}}"#, holding: secondBusy)
        try second.crash()
        // Fast: answered while every replica still holds, so not by a replica and not by a timeout.
        let unkeyed = try XCTUnwrap(client.readLine())
        XCTAssertTrue(unkeyed.contains(#""reason":"unavailable""#), unkeyed)
        XCTAssertEqual(replicas.filter { !$0.crashed }.map { $0.log.count("accounts.transfer") }, [0], "never repeated elsewhere")
    }

    func testVerificationCallsAreNotMovedWhenTheOwnerIsDown() throws {
        let replicaA = try FakeService(service: "verification", replicaID: "va", loopThread: loopThread)
        let replicaB = try FakeService(service: "verification", replicaID: "vb", loopThread: loopThread)
        let gateway = try start(["identity": [identity.endpoint], "verification": [replicaA.endpoint, replicaB.endpoint]])
        try gateway.waitUntilUp("verification", replicas: 2)
        try replicaA.crash()
        let client = try gateway.client()
        let answer = try client.call("verification.cancel", ["session": "lks_alice", "request_id": "vr_va_1"])
        XCTAssertEqual(answer.reason, "unavailable", "state lives on va; vb cannot answer for it")
        XCTAssertEqual(replicaB.log.count("verification.cancel"), 0)
        XCTAssertEqual(try client.call("verification.start", ["session": "lks_alice"]).result?["replica"]?.stringValue, "vb")
    }

    func testAServiceThatComesUpAfterTheGatewayIsServedAtOnce() throws {
        let port = identity.port
        try identity.crash()
        let gateway = try start(["identity": [Endpoint(host: "127.0.0.1", port: port)]])
        let client = try gateway.client()
        XCTAssertEqual(try client.call("identity.login", ["username": "a"]).reason, "unavailable")
        var failedProbes = Set<Int64>()
        waitUntil("several failed probes: the client backs off that address") {
            if let status = gateway.gateway.pools["identity"]?.statuses.first, status.state == .down, let at = status.lastCheckedMilliseconds {
                failedProbes.insert(at)
            }
            return failedProbes.count >= 3
        }
        let restarted = try FakeService(service: "identity", replicaID: "identity-again", loopThread: loopThread, port: port)
        XCTAssertEqual(try client.call("identity.login", ["username": "a"]).result?["replica"]?.stringValue, "identity-again")
        XCTAssertEqual(restarted.log.count("identity.login"), 1)
    }

    func testSilentUpstreamGivesTimeoutInBoundedTime() throws {
        let silent = Blocker()
        defer { silent.release() }
        identity.holding = silent
        var settings = GatewaySettings.unlimitedForTests
        settings.upstreamTimeoutMilliseconds = 300
        let gateway = try start(["identity": [identity.endpoint]], settings: settings)
        let client = try gateway.client()
        // Bounded: the upstream never answers (held until the test ends), and the gateway answers anyway.
        let answer = try client.call("identity.login", ["username": "a"])
        XCTAssertEqual(answer.reason, "timeout")
        XCTAssertEqual(answer.error?.code, 504)
        XCTAssertNotNil(try client.call("gateway.ping").result, "the gateway itself stays responsive")
    }
}

final class PoolAndCoalescingTests: XCTestCase {
    func testConcurrentRequestsWithOneTokenShareOneIntrospection() throws {
        let loopThread = try LoopThread()
        defer { loopThread.shutdown() }
        let identity = try FakeService(service: "identity", replicaID: "identity-1", loopThread: loopThread)
        identity.addSession(token: "lks_burst", sessionID: "s", aal: 1)
        let gateway = try GatewayUnderTest(endpoints: ["identity": [identity.endpoint]])
        defer { gateway.shutdown() }
        let client = try gateway.client()
        // One line, twenty requests: dispatched together, before any introspection returns.
        let batch = "[" + (1...20).map { #"{"jsonrpc":"2.0","id":\#($0),"method":"identity.keys","params":{"session":"lks_burst"}}"# }.joined(separator: ",") + "]\n"
        XCTAssertTrue(client.send(raw: batch))
        let answer = try XCTUnwrap(client.readLine())
        XCTAssertEqual(answer.components(separatedBy: "identity.keys").count - 1, 20)
        XCTAssertEqual(identity.log.count("identity.introspect"), 1)
    }

    func testReplicaNamesAreResolvedAndHealthReportsTheirStatus() throws {
        let loopThread = try LoopThread()
        defer { loopThread.shutdown() }
        let reset = try FakeService(service: "reset", replicaID: "reset-7", loopThread: loopThread)
        let gateway = try GatewayUnderTest(endpoints: ["reset": [Endpoint(host: "localhost", port: reset.port)]])
        defer { gateway.shutdown() }
        try gateway.waitUntilUp("reset", replicas: 1)
        gateway.gateway.pools["reset"]!.refreshAddresses()
        waitUntil("health reports the resolved replica") {
            let replicas = gateway.gateway.healthJSON["services"]?["reset"]?["replicas"]?.arrayValue ?? []
            return replicas.first { $0["replica_id"]?.stringValue == "reset-7" }?["status"]?.stringValue == "ok"
        }
        XCTAssertEqual(try gateway.client().call("reset.validate", ["token": "lkr_x"]).result?["replica"]?.stringValue, "reset-7")
    }
}
