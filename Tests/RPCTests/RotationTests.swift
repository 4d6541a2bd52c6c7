import Foundation
import LineProtocol
@testable import Platform
@testable import RPC
@testable import Runtime
import ServerTestSupport
import TestSupport
import XCTest

/// A client skips the replicas its pool took out of rotation for a call that names none. The
/// pool hands each loop's client the set with an increasing generation: posted changes can
/// arrive after one applied on the loop itself, and an older one must not undo a newer.
final class RotationTests: XCTestCase {
    func testAnOlderRotationArrivingLateDoesNotUndoANewerOne() throws {
        let replicas = try ["a", "b"].map { name in
            try RouterServer(service: name) { router in
                router.register("t.who", execution: .inline) { _, _ in .string(name) }
            }
        }
        defer { replicas.forEach { $0.stop() } }
        let caller = try LoopThread()
        defer { caller.shutdown() }
        let client = RPCClient(loop: caller.loop, service: "t", endpoints: replicas.map(\.endpoint), logger: Logger(service: "test", sink: LogSink()))
        let first = try SocketAddress.resolve(host: "127.0.0.1", port: replicas[0].endpoint.port)[0]

        XCTAssertEqual(try answers(8, client, caller), ["a", "b"], "both replicas in rotation")
        caller.loop.execute {
            client.setOutOfRotation([first], generation: 2)
            client.setOutOfRotation([], generation: 1)
        }
        XCTAssertEqual(try answers(8, client, caller), ["b"], "the older, emptier set arrived last and was dropped")
        caller.loop.execute { client.setOutOfRotation([], generation: 3) }
        XCTAssertEqual(try answers(8, client, caller), ["a", "b"], "a newer set puts it back")
    }

    /// Who answered `count` calls made one after another on the caller's loop (each task queued
    /// after the changes above, so it sees them).
    private func answers(_ count: Int, _ client: RPCClient, _ caller: LoopThread) throws -> Set<String> {
        let names = SharedList<Result<JSON, RPCError>>()
        for _ in 0..<count {
            let before = names.count
            caller.loop.execute {
                client.call("t.who", params: nil, timeoutMilliseconds: 10_000) { names.append($0.result) }
            }
            waitUntil("an answer", timeoutSeconds: 20) { names.count == before + 1 }
        }
        return Set(try names.all.map { try XCTUnwrap(try $0.get().stringValue) })
    }
}
