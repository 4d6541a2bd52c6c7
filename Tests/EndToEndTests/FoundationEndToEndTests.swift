import Foundation
import LineProtocol
import Platform
import RPC
import TestSupport
import XCTest

/// The walking skeleton over real TCP: five processes, the gateway forwarding, the
/// protocol's limits and the lifecycle.
final class FoundationEndToEndTests: StackTestCase {
    func testEveryProcessAnswersPingHealthAndMetrics() throws {
        for service in ["identity", "verification", "accounts", "reset"] {
            let client = try direct(service)
            XCTAssertEqual(try client.result("\(service).ping"), ["pong": true])
            XCTAssertEqual(try client.result("\(service).health")["status"], "ok")
            XCTAssertNotNil(try client.result("\(service).metrics")["methods"]?["\(service).ping"])
        }
        XCTAssertEqual(try gateway().result("gateway.ping"), ["pong": true])
    }

    func testGatewayAnswersHostileAndMalformedLinesAndKeepsServing() throws {
        let client = try gateway()
        let cases: [(String, Int)] = [
            ("{not json", -32700),
            (#"{"jsonrpc":"2.0","id":1,"method":"nope.missing"}"#, -32601),
            (#"{"jsonrpc":"1.0","id":1,"method":"gateway.ping"}"#, -32600),
            (#"{"jsonrpc":"2.0","id":{"a":1},"method":"gateway.ping"}"#, -32600),
            (String(repeating: "[", count: 10_000), -32700),
            (String(repeating: "[", count: 100_000), -32600),
            ("[]", -32600),
            (#"{"jsonrpc":"2.0","id":1,"method":"gateway.ping","id":2}"#, -32700),
        ]
        for (line, code) in cases {
            try client.send(Array(line.utf8))
            let answer = try JSONParser.parse(try XCTUnwrap(client.readLine()))
            XCTAssertEqual(answer["error"]?["code"]?.intValue, Int64(code), "for \(line.prefix(40))")
        }
        try client.sendRaw([0xff, 0xfe, 0x00, 0x0a])
        XCTAssertEqual(try JSONParser.parse(try XCTUnwrap(client.readLine()))["error"]?["code"], -32700)
        XCTAssertEqual(try client.result("gateway.ping"), ["pong": true])
    }

    func testLineOverTheLimitGetsAnErrorAndTheConnectionSurvives() throws {
        let client = try gateway()
        try client.send(Array(repeating: UInt8(ascii: "a"), count: 200 * 1024))
        let answer = try JSONParser.parse(try XCTUnwrap(client.readLine()))
        XCTAssertEqual(answer["error"]?["data"]?["reason"], "line_too_long")
        XCTAssertEqual(try client.result("identity.ping"), ["pong": true])
    }

    func testTwoHundredConnectionsPipeliningAllGetTheirOwnAnswers() throws {
        let endpoint = stack.gateway
        let failures = SharedList<String>()
        DispatchQueue.concurrentPerform(iterations: 200) { connection in
            do {
                let client = try LineClient(endpoint)
                for index in 0..<20 {
                    let id = "\(connection)-\(index)"
                    try client.send(RPCRequest(method: "identity.ping", id: .string(id)).encoded())
                }
                var seen = Set<String>()
                for _ in 0..<20 {
                    let answer = try JSONParser.parse(try XCTUnwrap(client.readLine()))
                    guard answer["result"] == ["pong": true], let id = answer["id"]?.stringValue, id.hasPrefix("\(connection)-") else {
                        failures.append("connection \(connection): unexpected \(answer.text)")
                        return
                    }
                    seen.insert(id)
                }
                if seen.count != 20 { failures.append("connection \(connection): \(seen.count) distinct answers") }
            } catch {
                failures.append("connection \(connection): \(error)")
            }
        }
        XCTAssertEqual(failures.all, [])
    }

    func testSigtermDrainsInflightRequestsAndExitsZero() throws {
        let client = try direct("identity")
        // Accepted first: a connection still in the kernel's backlog when the signal lands is
        // (rightly) never accepted by a draining server.
        XCTAssertEqual(try client.result("identity.ping")["pong"], true)
        // A batch of health checks is in flight when the signal lands; every one is answered.
        let batch = JSON.array((0..<50).map { JSON.object(["jsonrpc": "2.0", "id": .int(Int64($0)), "method": "identity.health"]) })
        try client.send(batch.encoded())
        kill(stack.member("identity").process.processIdentifier, SIGTERM)
        let answer = try JSONParser.parse(try XCTUnwrap(client.readLine()))
        XCTAssertEqual(answer.arrayValue?.count, 50)
        stack.member("identity").process.waitUntilExit()
        XCTAssertEqual(stack.member("identity").process.terminationStatus, 0)
        XCTAssertTrue(stack.member("identity").log.contains("\"msg\":\"stopped\""))
    }

    func testGatewayGivesUnavailableFastWhenAServiceIsDownAndRecovers() throws {
        stack.kill("reset")
        let client = try gateway()
        // `unavailable`, not `timeout`: the gateway reports the dead service, it does not wait for it.
        assertError(try client.call("reset.ping"), "unavailable")
        try stack.restart("reset")
        var recovered = false
        for _ in 0..<50 where !recovered {
            if case .success = try client.call("reset.ping").outcome { recovered = true } else { usleep(100_000) }
        }
        XCTAssertTrue(recovered, "the gateway reconnects once reset is back")
    }
}
