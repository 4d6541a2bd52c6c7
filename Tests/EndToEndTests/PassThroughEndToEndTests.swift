import Foundation
import LineProtocol
import Platform
import RPC
import XCTest

/// The real gateway passes a service's `result` on as the bytes the service wrote, only the `id`
/// rewritten; it refuses (never forwards) an answer that is not one well-formed JSON-RPC line;
/// and under pipelining every answer reaches its own request once, in order on one connection.
/// The service is a `ScriptedService` that answers whatever line each request scripts.
final class PassThroughEndToEndTests: XCTestCase {
    private var directory: String!
    private var service: ScriptedService!
    private var gateway: LaunchedProcess?

    override func setUpWithError() throws {
        directory = try makeScratchDirectory("pass-through")
        service = try ScriptedService()
    }

    override func tearDown() {
        gateway?.kill()
        service?.stop()
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// A long upstream timeout: a refused answer must come back at once, not when a call times out.
    private func launchGateway(_ extra: [String] = []) throws -> LaunchedProcess {
        let address = service.address
        let launched = try LaunchedProcess(
            "gateway", name: "gateway",
            arguments: [
                "--identity", address, "--verification", address, "--accounts", address, "--reset", address,
                "--upstream-timeout-ms", "60000", "--request-timeout-ms", "60000", "--rate-limits", "ping=0:1,default=0:1",
                // No HTTP door: its default port is fixed, and tests run in parallel would share it.
                "--http-listen", "off",
            ] + extra, directory: directory)
        gateway = launched
        return launched
    }

    /// One `identity.ping` whose service answer is `answer` (`$ID` for the gateway's id).
    private static func request(id: Int64, answer: String) -> [UInt8] {
        RPCRequest(method: "identity.ping", params: ["answer": .string(answer)], id: .int(id)).encoded() + [0x0A]
    }

    private static func resultLine(_ result: String) -> String { #"{"jsonrpc":"2.0","id":$ID,"result":"# + result + "}" }

    func testResultsOfEveryJSONShapeReachTheClientByteForByte() throws {
        let gateway = try launchGateway()
        let client = try LineClient(gateway.endpoint, timeoutMilliseconds: 15_000)
        // Written as a service might write them: keys in its own order, escapes and number forms
        // an encoder would change. Each must come back exactly, inside the gateway's envelope.
        let results = [
            #"{"pong":true}"#, #"{}"#, #"[]"#, #"{"b":1,"a":{"z":[{},[],null]}}"#, #"[1,-0,2.50,1E2,-1.5e-7,12345678901234567890123]"#,
            #""plain""#, #""\u0041\u00e9\ud83d\ude00 \"quoted\" \\ \/ \n""#, #""é and 😀 as UTF-8""#, "0", "-12", "3.0", "true", "false", "null",
            #"{"nested":{"deeper":{"deepest":[[[["x"]]]]}},"n":-9223372036854775808}"#,
        ]
        for (index, result) in results.enumerated() {
            let id = Int64(index + 1)
            try client.sendRaw(Self.request(id: id, answer: Self.resultLine(result)))
            let line = try XCTUnwrap(try client.readLine(), "no answer for \(result)")
            XCTAssertEqual(String(decoding: line, as: UTF8.self), #"{"jsonrpc":"2.0","id":\#(id),"result":"# + result + "}")
        }
    }

    func testMalformedAnswersAreRefusedWithAClearErrorAndNeverForwarded() throws {
        let gateway = try launchGateway()
        let client = try LineClient(gateway.endpoint, timeoutMilliseconds: 15_000)
        let malformed = [
            "not json at all",
            Self.resultLine(#"{"a":1,"a":2}"#),  // duplicate key
            Self.resultLine(#"{"a":1,"\u0061":2}"#),  // the same key, escaped
            Self.resultLine(#""\ud800""#),  // lone surrogate escape
            Self.resultLine("[" + String(repeating: "[", count: 70) + String(repeating: "]", count: 70) + "]"),  // too deep
            Self.resultLine("1e400"),  // no finite number
            Self.resultLine(#"{"a":"#) + "\n" + "1}}",  // one result over two lines
            Self.resultLine("[1,2,]"),
            Self.resultLine("\"tab\tinside\""),  // raw control character
            #"{"jsonrpc":"2.0","id":$ID,"result":1} trailing"#,
            #"{"jsonrpc":"2.0","id":$ID}"#,  // neither result nor error
        ]
        for (index, answer) in malformed.enumerated() {
            let id = Int64(index + 1)
            try client.sendRaw(Self.request(id: id, answer: answer))
            let line = try XCTUnwrap(try client.readLine(), "no answer when the service answered \(answer)")
            let text = String(decoding: line, as: UTF8.self)
            let response = try XCTUnwrap(RPCResponse.decode(try JSONParser.parse(line)), text)
            XCTAssertEqual(response.id, .int(id), text)
            guard case .failure(let error) = response.outcome else {
                XCTFail("a malformed answer was passed on: \(text)")
                continue
            }
            XCTAssertEqual(error.reason, .unavailable, text)
            XCTAssertEqual(error.message, "identity answered a malformed response", text)
        }
        // The refused bytes went nowhere; and the next good answer passes.
        let logged = gateway.log
        XCTAssertFalse(logged.contains("not json at all"), "the refused bytes are never logged")
        try client.sendRaw(Self.request(id: 99, answer: Self.resultLine(#"{"ok":true}"#)))
        XCTAssertEqual(try client.readLine().map { String(decoding: $0, as: UTF8.self) }, #"{"jsonrpc":"2.0","id":99,"result":{"ok":true}}"#)
    }

    func testPipelinedAnswersOnManyConnectionsArriveOnceEachInTheirOrder() throws {
        // One loop and one upstream connection: the service answers in arrival order, so each
        // client connection must see its answers in the order it sent the requests.
        let gateway = try launchGateway(["--event-loops", "1", "--connections-per-replica", "1"])
        let connections = 8
        let perConnection = 500
        let endpoint = gateway.endpoint
        let failures = PassThroughFailures()
        DispatchQueue.concurrentPerform(iterations: connections) { connection in
            do {
                let client = try LineClient(endpoint, timeoutMilliseconds: 15_000)
                var burst: [UInt8] = []
                for index in 0..<perConnection {
                    let result = #"{"connection":\#(connection),"index":\#(index),"pad":"\#(String(repeating: "x", count: index % 37))"}"#
                    burst += Self.request(id: Int64(index), answer: Self.resultLine(result))
                }
                try client.sendRaw(burst)
                for index in 0..<perConnection {
                    guard let line = try client.readLine() else { throw GatewayTestError("closed after \(index) answers") }
                    let expected = #"{"jsonrpc":"2.0","id":\#(index),"result":{"connection":\#(connection),"index":\#(index),"pad":"\#(String(repeating: "x", count: index % 37))"}}"#
                    let text = String(decoding: line, as: UTF8.self)
                    guard text == expected else { throw GatewayTestError("answer \(index): expected \(expected), got \(text)") }
                }
            } catch {
                failures.add("connection \(connection): \(error)")
            }
        }
        XCTAssertEqual(failures.all, [])
    }
}

final class PassThroughFailures: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ failure: String) { lock.withLock { list.append(failure) } }
    var all: [String] { lock.withLock { list } }
}
