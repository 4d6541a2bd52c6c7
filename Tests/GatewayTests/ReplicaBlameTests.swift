import Foundation
@testable import Gateway
import LineProtocol
import ServerTestSupport
import TestSupport
import XCTest


/// Only a failure of the gateway's own link to a replica marks it down or moves a call: an
/// error the replica answered (even `unavailable`, even one that carries `sent: false` from the
/// replica's own client to its dependency) is that replica's answer, passed through once.
final class ReplicaBlameTests: XCTestCase {
    private var loopThread: LoopThread!
    private var gateway: GatewayUnderTest?
    /// The identity replica `startWithTwoAccountsReplicas` started, kept for the test's length.
    private var identity: FakeService?

    override func setUpWithError() throws {
        loopThread = try LoopThread()
    }

    override func tearDown() {
        gateway?.shutdown()
        loopThread?.shutdown()
        gateway = nil
        identity = nil
        loopThread = nil
    }

    /// What accounts answers when its link to verification failed before sending.
    private static let dependencyDown = RPCError(.unavailable, "verification is unavailable", extra: ["sent": false])

    func testADependencyErrorFromAHealthyReplicaIsPassedThroughOnceAndTheReplicaStaysUp() throws {
        let identity = try FakeService(service: "identity", replicaID: "identity-1", loopThread: loopThread)
        identity.addSession(token: "lks_alice", sessionID: "s-alice", aal: 2)
        let replicas = try ["accounts-a", "accounts-b"].map { try FakeService(service: "accounts", replicaID: $0, loopThread: loopThread) }
        for replica in replicas { replica.answerError = Self.dependencyDown }
        var settings = GatewaySettings.unlimitedForTests
        // One probe at start: a later probe must not be what puts a wrongly blamed replica back.
        settings.healthIntervalMilliseconds = 600_000
        let started = try GatewayUnderTest(endpoints: ["identity": [identity.endpoint], "accounts": replicas.map(\.endpoint)], settings: settings)
        gateway = started
        try started.waitUntilUp("accounts", replicas: 2)
        let client = try started.client()

        let methods: [(String, JSON)] = [
            ("accounts.transfer", ["session": "lks_alice", "from": "checking", "to": "saving", "amount": 5]),
            ("accounts.transfer", ["session": "lks_alice", "from": "checking", "to": "saving", "amount": 5, "idempotency_key": "k1"]),
            ("accounts.balances", ["session": "lks_alice"]),
        ]
        for (method, params) in methods {
            let answer = try client.call(method, params)
            XCTAssertEqual(answer.error?.message, Self.dependencyDown.message, "the replica's own answer, unchanged")
            XCTAssertEqual(answer.reason, "unavailable")
        }
        let served = replicas.map { $0.log.count("accounts.transfer") + $0.log.count("accounts.balances") }
        XCTAssertEqual(served.reduce(0, +), methods.count, "each request reached one replica once: never resent (\(served))")
        XCTAssertEqual(started.gateway.pools["accounts"]?.statuses.map(\.state), [.up, .up], "no healthy replica was marked down")
        let health = started.gateway.healthJSON
        XCTAssertEqual(health["services"]?["accounts"]?["up"], 2)
        XCTAssertEqual(health["status"], "ok")
        XCTAssertFalse(started.logSink.capturedText.contains("replica marked down"), started.logSink.capturedText)
    }

    func testALostLinkStillMarksTheReplicaDownAndMovesASafeCall() throws {
        let (started, replicas, client) = try startWithTwoAccountsReplicas()
        try replicas[0].crash()
        for _ in 0..<4 {
            XCTAssertEqual(try client.call("accounts.balances", ["session": "lks_alice"]).result?["replica"], "accounts-b")
        }
        XCTAssertEqual(started.gateway.pools["accounts"]?.statuses.map(\.state), [.down, .up])
    }

    /// A replica taken out of rotation while it still answers gets no call until a probe puts it
    /// back. Each loop's client holds the rotation (a forward takes no lock for it); a change is
    /// posted to every loop before the next request that loop reads.
    func testAReplicaOutOfRotationGetsNoCallWhileItStillAnswersUntilAProbePutsItBack() throws {
        let (started, replicas, client) = try startWithTwoAccountsReplicas()
        let pool = try XCTUnwrap(started.gateway.pools["accounts"])
        let first = try XCTUnwrap(pool.statuses.first { $0.address.port == replicas[0].port }?.address)

        pool.markFailed(first, reason: "test")
        // One round trip on this connection's loop: the change was queued before it was read.
        XCTAssertNotNil(try client.call("gateway.ping").result)
        for _ in 0..<8 {
            XCTAssertEqual(try client.call("accounts.balances", ["session": "lks_alice"]).result?["replica"], "accounts-b")
        }
        XCTAssertEqual(replicas[0].log.count("accounts.balances"), 0, "alive, but out of rotation")

        pool.probe()
        waitUntil("the probe answered", timeoutSeconds: 10) { pool.statuses.allSatisfy { $0.state == .up } }
        XCTAssertNotNil(try client.call("gateway.ping").result)
        var served = Set<String>()
        for _ in 0..<8 {
            if let replica = try client.call("accounts.balances", ["session": "lks_alice"]).result?["replica"]?.stringValue { served.insert(replica) }
        }
        XCTAssertEqual(served, ["accounts-a", "accounts-b"], "back in rotation, it takes its turn again")
    }

    /// A gateway over two accounts replicas, both up, probed once at start only (a later probe
    /// must not be what changes a replica's state), and a client of it.
    private func startWithTwoAccountsReplicas() throws -> (GatewayUnderTest, [FakeService], TestLineClient) {
        let identity = try FakeService(service: "identity", replicaID: "identity-1", loopThread: loopThread)
        self.identity = identity
        identity.addSession(token: "lks_alice", sessionID: "s-alice", aal: 2)
        let replicas = try ["accounts-a", "accounts-b"].map { try FakeService(service: "accounts", replicaID: $0, loopThread: loopThread) }
        var settings = GatewaySettings.unlimitedForTests
        settings.healthIntervalMilliseconds = 600_000
        let started = try GatewayUnderTest(endpoints: ["identity": [identity.endpoint], "accounts": replicas.map(\.endpoint)], settings: settings)
        gateway = started
        try started.waitUntilUp("accounts", replicas: 2)
        let client = try started.client()
        return (started, replicas, client)
    }
}
