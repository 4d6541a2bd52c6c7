import Foundation
import LineProtocol
@testable import Platform
@testable import RPC
@testable import Runtime
import ServerTestSupport
import TestSupport
import XCTest

/// A client keeps a few connections per replica. Calls made in one turn of its loop travel on
/// one of them, so a client's pipelined requests reach the service together and their answers
/// come back in one read; the next turn takes the next connection, so both carry load.
final class UpstreamConnectionChoiceTests: XCTestCase {
    func testCallsOfOneLoopTurnShareAConnectionAndTheNextTurnTakesTheOther() throws {
        let upstream = try ConnectionNamingUpstream()
        defer { upstream.stop() }
        let caller = try LoopThread()
        defer { caller.shutdown() }
        let client = RPCClient(
            loop: caller.loop, service: "t", endpoints: [Endpoint(host: "127.0.0.1", port: upstream.port)], connectionsPerAddress: 2,
            logger: Logger(service: "test", sink: LogSink()))

        // Opens both connections (the client's first look for the replica's id may open one of them).
        _ = try callsInOneTurn(2, client, caller)
        var used: [Set<Int>] = []
        for _ in 0..<4 {
            let connections = try callsInOneTurn(16, client, caller)
            XCTAssertEqual(connections.count, 1, "sixteen calls made in one turn went on \(connections.count) connections")
            used.append(connections)
        }
        XCTAssertEqual(used.reduce(into: Set<Int>()) { $0.formUnion($1) }.count, 2, "turn after turn, both connections carry calls")
    }

    /// Makes `count` calls from one task on the loop (one turn) and waits for every answer:
    /// the connections (numbered by the upstream in accept order) that carried them.
    private func callsInOneTurn(_ count: Int, _ client: RPCClient, _ caller: LoopThread) throws -> Set<Int> {
        let answers = SharedList<Result<JSON, RPCError>>()
        caller.loop.execute {
            for _ in 0..<count {
                client.call("t.which", params: nil, timeoutMilliseconds: 10_000) { answers.append($0.result) }
            }
        }
        waitUntil("\(count) answers", timeoutSeconds: 20) { answers.count == count }
        return Set(try answers.all.map { result in
            guard let connection = try result.get().intValue else { throw TestFailure("no connection number") }
            return Int(connection)
        })
    }
}

/// A line server on plain blocking sockets that answers every request with the number of the
/// connection it came on (0 for the first accepted, 1 for the next, ...).
private final class ConnectionNamingUpstream: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let stopped = Locked(false)
    private let accepted = Locked<[Int32]>([])

    init() throws {
        (listener, port) = try LoopbackSocket.listen()
        Thread { [self] in acceptLoop() }.start()
    }

    func stop() {
        stopped.withLock { $0 = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in accepted.current { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        var number = 0
        while !stopped.current {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return }
            accepted.withLock { $0.append(fd) }
            let connection = number
            number += 1
            Thread { [self] in serve(fd, connection) }.start()
        }
    }

    private func serve(_ fd: Int32, _ connection: Int) {
        defer { close(fd) }
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            pending += buffer[0..<count]
            var answers: [UInt8] = []
            while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<end], as: UTF8.self)
                pending.removeSubrange(...end)
                guard let id = (try? JSONParser.parse(line))?["id"] else { return }
                answers += Array(JSON.object(["jsonrpc": "2.0", "id": id, "result": .int(Int64(connection))]).text.utf8) + [UInt8(ascii: "\n")]
            }
            guard LoopbackSocket.sendAll(fd, answers) else { return }
        }
    }
}
