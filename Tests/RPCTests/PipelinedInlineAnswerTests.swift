import Foundation
import LineProtocol
@testable import Platform
@testable import RPC
@testable import Runtime
import ServerTestSupport
import TestSupport
import XCTest

/// Answers given during dispatch (inline methods, the gateway's own refusals) to a long pipeline
/// on one connection: each must not start another pass over the input from inside the last one,
/// or the stack grows with every pipelined line (a gateway crashed on 64 KiB of unknown methods).
final class PipelinedInlineAnswerTests: XCTestCase {
    func testInlineAnswersToAPipelineDoNotNestDispatches() throws {
        let dispatcher = NestingDispatcher()
        let harness = try ParkedServerHarness(parking: AnswerParking(minimumAgeMilliseconds: 0)) { loop in
            let server = RPCServer(
                loop: loop, limits: ServerLimits(), dispatcher: dispatcher, logger: Logger(service: "test", sink: LogSink()),
                replicaID: "test", trustsCallerMeta: true)
            return (try server.listen(on: Endpoint(host: "127.0.0.1", port: 0)), { done in server.drain(completion: done) })
        }
        defer { harness.stop() }
        let client = try LineClient(harness.endpoint)
        let total = 5000
        var pipeline: [UInt8] = []
        for index in 0..<total {
            pipeline += RPCRequest(method: "t.inline", params: nil, id: .int(Int64(index))).encoded() + [0x0A]
        }
        // The answers fit in the socket buffers and the server's output buffer, so one thread may send all first.
        try client.sendRaw(pipeline)
        var answered = 0
        while answered < total, let line = try client.readLine() {
            XCTAssertEqual(try JSONParser.parse(line)["id"], .int(Int64(answered)))
            answered += 1
        }
        XCTAssertEqual(answered, total)
        XCTAssertEqual(dispatcher.deepestNesting, 1, "a dispatch started inside another one's answer")
    }
}

/// Answers at once, on the caller's thread, and records how deeply dispatches nested.
final class NestingDispatcher: RPCDispatcher, @unchecked Sendable {
    private let lock = NSLock()
    private var depth = 0
    private var deepest = 0

    func dispatch(_ request: RPCRequest, context: CallContext, reply: @escaping @Sendable (Result<JSON, RPCError>) -> Void) {
        lock.lock()
        depth += 1
        deepest = max(deepest, depth)
        lock.unlock()
        reply(.success(true))
        lock.lock()
        depth -= 1
        lock.unlock()
    }

    var deepestNesting: Int {
        lock.lock()
        defer { lock.unlock() }
        return deepest
    }
}
