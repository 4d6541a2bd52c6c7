import Foundation
import LineProtocol
@testable import Platform
@testable import RPC
@testable import Runtime
import ServerTestSupport
import TestSupport
import XCTest

/// `callAndWait`, the blocking call a worker thread makes to another service, against real
/// servers over TCP: answers reach their own caller, pins hold, lost replicas fail safely.
final class CallAndWaitTests: XCTestCase {
    private func client(of endpoint: Endpoint, on caller: LoopThread) -> RPCClient {
        RPCClient(loop: caller.loop, service: "t", endpoints: [endpoint], logger: Logger(service: "c", sink: LogSink()))
    }

    /// Many threads at once over the client's shared connections: every one gets its own answer,
    /// none another's.
    func testManyWorkersAtOnceEachGetTheirOwnAnswer() throws {
        let server = try RouterServer(workerThreads: 8) { router in
            router.register("t.echo") { params, _ in
                usleep(UInt32(try params.int("wait_us", range: 0...1000)))  // overlap the calls
                return params["value"] ?? .null
            }
        }
        defer { server.stop() }
        let caller = try LoopThread()
        defer { caller.shutdown() }
        let client = client(of: server.endpoint, on: caller)
        let results = SharedList<Int64>()
        DispatchQueue.concurrentPerform(iterations: 400) { index in
            let params: JSON = ["value": .int(Int64(index)), "wait_us": .int(Int64(index % 7) * 100)]
            let value = try? client.callAndWait("t.echo", params: params, context: nil, timeoutMilliseconds: 30_000)
            results.append(value?.intValue ?? -1)
        }
        XCTAssertEqual(results.all.sorted(), (0..<400).map(Int64.init))
    }

    /// The answer to a call that timed out arrives later on the same connection: it never
    /// reaches a later call, which gets its own.
    func testAnAnswerArrivingAfterItsCallTimedOutNeverReachesALaterCall() throws {
        let blocker = Blocker()
        let late = Counter()
        let server = try RouterServer { router in
            router.register("t.hold") { _, _ in
                blocker.hold()
                late.add()
                return "late"
            }
            router.register("t.echo") { params, _ in params["value"] ?? .null }
        }
        defer { server.stop() }
        let caller = try LoopThread()
        defer { caller.shutdown() }
        let client = client(of: server.endpoint, on: caller)
        XCTAssertEqual(try client.callAndWait("t.echo", params: ["value": 0], context: nil), 0)
        XCTAssertThrowsError(try client.callAndWait("t.hold", params: nil, context: nil, timeoutMilliseconds: 300)) { error in
            XCTAssertEqual((error as? RPCError)?.reason, .timeout)
        }
        blocker.release()
        waitUntil("the held call has answered late") { late.value == 1 }
        for value in 1...20 {
            XCTAssertEqual(try client.callAndWait("t.echo", params: ["value": .int(Int64(value))], context: nil), .int(Int64(value)))
        }
    }

    /// A replica restarted on the same address between two calls closed the client's
    /// connection; the next call goes out on a new one and is answered, not lost.
    func testACallAfterTheReplicaRestartedIsAnswered() throws {
        let register: (Router) -> Void = { $0.register("t.echo") { params, _ in params["value"] ?? .null } }
        let first = try RouterServer(register: register)
        let caller = try LoopThread()
        defer { caller.shutdown() }
        let client = client(of: first.endpoint, on: caller)
        XCTAssertEqual(try client.callAndWait("t.echo", params: ["value": 1], context: nil), 1)
        first.stop()
        let second = try RouterServer(port: first.endpoint.port, register: register)
        defer { second.stop() }
        for value in 2...5 {
            XCTAssertEqual(try client.callAndWait("t.echo", params: ["value": .int(Int64(value))], context: nil), .int(Int64(value)))
        }
    }

    /// A call pinned to a replica id goes to that replica; unpinned calls take the replicas in turn.
    func testAPinnedCallReachesTheNamedReplicaAndUnpinnedOnesTakeTurns() throws {
        let first = try RouterServer(register: Self.replica(named: "a"))
        defer { first.stop() }
        let second = try RouterServer(register: Self.replica(named: "b"))
        defer { second.stop() }
        let caller = try LoopThread()
        defer { caller.shutdown() }
        let client = clientKnowingBoth(first, second, on: caller)
        for _ in 0..<20 {
            XCTAssertEqual(try client.callAndWait("t.who", params: nil, context: nil, replicaID: "b"), "b")
        }
        let unpinned = try (0..<20).map { _ in try client.callAndWait("t.who", params: nil, context: nil) }
        XCTAssertEqual(unpinned.filter { $0 == "a" }.count, 10)
        XCTAssertEqual(unpinned.filter { $0 == "b" }.count, 10)
    }

    /// A replica that crashed (its connections dropped, its port closed) fails a call only as
    /// never sent (`sent` false: safe to send again), and is then skipped: calls go to the other.
    /// "Crashed" as the client knows it: a call written in the same loop turn as the crash's FIN
    /// arrives was written, and is rightly reported as possibly sent.
    func testACrashedReplicaFailsCallsOnlyAsUnsentAndIsThenSkipped() throws {
        let doomed = try RouterServer(register: Self.replica(named: "a"))
        defer { doomed.stop() }
        let survivor = try RouterServer(register: Self.replica(named: "b"))
        defer { survivor.stop() }
        let caller = try LoopThread()
        defer { caller.shutdown() }
        let client = clientKnowingBoth(doomed, survivor, on: caller)
        // Connections to both replicas, so the crash drops one the client holds.
        let before = Set(try (0..<4).map { _ in try client.callAndWait("t.who", params: nil, context: nil).stringValue })
        XCTAssertEqual(before, ["a", "b"])
        doomed.crash()
        // The FIN is on the client's socket once `crash` returns (loopback); a loop turn that
        // began before it reported it may run a call first, the next one has handled it.
        try caller.sync {}
        try caller.sync {}
        var unsent = 0
        var answers: [String?] = []
        while answers.count < 20 && unsent < 10 {
            do {
                answers.append(try client.callAndWait("t.who", params: nil, context: nil).stringValue)
            } catch {
                XCTAssertEqual(error.reason, .unavailable)
                XCTAssertEqual(error.data?["sent"], .bool(false), "a call to a crashed replica was never written")
                unsent += 1
            }
        }
        XCTAssertEqual(answers.count, 20)
        XCTAssertEqual(Set(answers), ["b"])
        XCTAssertGreaterThanOrEqual(unsent, 1, "the crashed replica was tried and marked down")
        let states = Locked<[(address: SocketAddress, up: Bool)]?>(nil)
        client.addressStates { found in states.withLock { $0 = found } }
        waitUntil("the client reports its replicas") { states.current != nil }
        let doomedAddress = try SocketAddress.resolve(host: "127.0.0.1", port: doomed.endpoint.port)[0]
        XCTAssertEqual(states.current?.first { $0.address == doomedAddress }?.up, false, "the crashed replica is backing off")
    }

    /// A client of replicas `a` and `b` once it has learned both their ids.
    private func clientKnowingBoth(_ a: RouterServer, _ b: RouterServer, on caller: LoopThread) -> RPCClient {
        let client = RPCClient(loop: caller.loop, service: "t", endpoints: [a.endpoint, b.endpoint], logger: Logger(service: "c", sink: LogSink()))
        waitUntil("both replica ids are learned") { Self.learnedIDs(of: client) == ["a", "b"] }
        return client
    }

    private static func learnedIDs(of client: RPCClient) -> Set<String> {
        let found = Locked<Set<String>?>(nil)
        client.replicaIDs { ids in found.withLock { $0 = Set(ids.values) } }
        waitUntil("the client lists its replica ids") { found.current != nil }
        return found.current ?? []
    }

    /// A replica whose health names it and whose `t.who` answers its name.
    private static func replica(named name: String) -> (Router) -> Void {
        { router in
            router.register("t.health") { _, _ in ["replica_id": .string(name)] }
            router.register("t.who") { _, _ in .string(name) }
        }
    }

    /// A line that is no answer ends the call as `unavailable` (it may have run: `sent` true), and
    /// its connection is never used again: the next call goes out on a new one.
    func testAMalformedAnswerEndsTheCallAndItsConnection() throws {
        let replica = try GarbledReplica()
        defer { replica.stop() }
        let caller = try LoopThread()
        defer { caller.shutdown() }
        let client = client(of: replica.endpoint, on: caller)
        XCTAssertThrowsError(try client.callAndWait("t.garble", params: nil, context: nil)) { error in
            XCTAssertEqual((error as? RPCError)?.reason, .unavailable)
            XCTAssertEqual((error as? RPCError)?.data?["sent"], .bool(true))
        }
        XCTAssertEqual(try client.callAndWait("t.echo", params: nil, context: nil), "ok")
        let garbled = replica.connections(carrying: "t.garble")
        let answered = replica.connections(carrying: "t.echo")
        XCTAssertEqual(garbled.count, 1)
        XCTAssertEqual(answered.count, 1)
        XCTAssertTrue(garbled.isDisjoint(with: answered))
    }
}

/// A replica that answers `t.garble` with a line that is not JSON and anything else with
/// `"ok"`, and notes which connection carried which method. One thread per connection.
private final class GarbledReplica: @unchecked Sendable {
    let endpoint: Endpoint
    private let listener: Socket
    private let seen = SharedList<(connection: Int, method: String)>()
    private let stopped = Locked(false)

    init() throws {
        listener = try Socket.listen(on: try SocketAddress.resolve(host: "127.0.0.1", port: 0)[0])
        endpoint = Endpoint(host: "127.0.0.1", port: listener.localAddress!.port)
        Thread { [self] in acceptLoop() }.start()
    }

    func stop() {
        stopped.withLock { $0 = true }
        listener.shutdownWrite()
    }

    func connections(carrying method: String) -> Set<Int> {
        Set(seen.all.filter { $0.method == method }.map(\.connection))
    }

    private func acceptLoop() {
        var number = 0
        while !stopped.current {
            var poller = pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0)
            guard LibC.poll(&poller, 1, 100) > 0, case .done(let (socket, _))? = try? listener.accept() else { continue }
            number += 1
            let connection = number
            Thread { [self] in serve(socket, connection: connection) }.start()
        }
        listener.close()
    }

    private func serve(_ socket: Socket, connection: Int) {
        defer { socket.close() }
        var framer = LineFramer(maxLineBytes: 1 << 20)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !stopped.current {
            var poller = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
            guard LibC.poll(&poller, 1, 100) > 0 else { continue }
            guard case .done(let count)? = try? buffer.withUnsafeMutableBytes({ try socket.read(into: $0) }), count > 0 else { return }
            framer.append(buffer[..<count])
            while case .line(let line)? = framer.next() {
                guard case .single(.request(let request)) = RPCDecoder.decode(line: line) else { return }
                seen.append((connection, request.method))
                var answer = request.method == "t.garble"
                    ? Array("this is not an answer".utf8) : RPCResponse(id: request.id ?? .null, result: "ok").encoded()
                answer.append(UInt8(ascii: "\n"))
                _ = try? answer.withUnsafeBytes { try socket.write($0) }
            }
        }
    }
}
