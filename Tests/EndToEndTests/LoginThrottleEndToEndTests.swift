import Foundation
import LineProtocol
import RPC
import Secrets
import TestSupport
import XCTest

/// The login throttle against the real executables: a burst of guesses pipelined on one
/// connection to the identity process, and the owner's `device_token` carried through the
/// gateway's line protocol and its HTTP door while guessers keep the account locked.
final class LoginThrottleEndToEndTests: StackTestCase {
    static let password = "correct horse battery"

    private func register(_ client: LineClient, _ username: String) throws {
        _ = try client.result("identity.register", [
            "username": .string(username), "password": .string(Self.password),
            "email": .string("\(username)@example.com"), "phone": "+15555550100",
        ])
    }

    private func loginParams(_ username: String, password: String, device: String = "iphone-1", token: JSON? = nil) -> JSON {
        var params: [String: JSON] = ["username": .string(username), "password": .string(password), "device_id": .string(device)]
        if let token { params["device_token"] = token }
        return .object(params)
    }

    /// Sends `count` logins at once on one connection and tallies the answers by reason.
    private func pipelined(_ client: LineClient, count: Int, _ params: (Int) -> JSON) throws -> [String: Int] {
        for index in 0..<count {
            let request: JSON = ["jsonrpc": "2.0", "id": .int(Int64(index)), "method": "identity.login", "params": params(index)]
            try client.send(Array(request.text.utf8) + [0x0A])
        }
        var tally: [String: Int] = [:]
        for _ in 0..<count {
            let line = try XCTUnwrap(try client.readLine(), "every request is answered")
            let answer = try JSONParser.parse(String(decoding: line, as: UTF8.self))
            tally[answer["error"]?["data"]?["reason"]?.stringValue ?? "ok", default: 0] += 1
        }
        return tally
    }

    func testThirtyPipelinedWrongGuessesCheckOnlyTheFreeFailures() throws {
        let identity = try direct("identity")
        try register(identity, "dora")
        let tally = try pipelined(identity, count: 30) { index in self.loginParams("dora", password: "wrong guess \(index)", device: "attacker") }
        XCTAssertEqual(tally["invalid_credentials"], 5, "each invalid_credentials is one password check: \(tally)")
        // The rest are refused before any hash: `locked`, or, when a slow machine keeps many of them
        // in flight together, `rate_limited` by the address budget those in-flight ones hold.
        XCTAssertEqual(tally.filter { !["invalid_credentials", "locked", "rate_limited"].contains($0.key) }, [:], "\(tally)")
        XCTAssertGreaterThan(tally["locked"] ?? 0, 0, "\(tally)")
    }

    /// Reservations are committed before the hash: guesses in flight when identity dies by
    /// kill -9 stay counted, so a burst, a crash, a restart and another burst still check at
    /// most the free failures in passwords.
    func testGuessesInFlightAtAKillStayCountedAfterTheRestart() throws {
        let directory = try makeScratchDirectory("login-kill")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A costly hash keeps guesses in flight when the first answer comes back.
        let first = try LaunchedProcess("identity", name: "identity", arguments: ["--scrypt-log-n", "14"], directory: directory)
        defer { first.kill() }
        let client = try LineClient(first.endpoint, timeoutMilliseconds: 30_000)
        try register(client, "fred")
        for index in 0..<30 {
            let request: JSON = ["jsonrpc": "2.0", "id": .int(Int64(index)), "method": "identity.login",
                                 "params": loginParams("fred", password: "wrong guess \(index)", device: "attacker")]
            try client.send(Array(request.text.utf8) + [0x0A])
        }
        let firstAnswer = try JSONParser.parse(String(decoding: try XCTUnwrap(try client.readLine()), as: UTF8.self))
        first.kill()
        // Hashes started before the kill, at least: one if a guess was answered, all five free
        // failures if the first answer was `locked` (the fifth reservation sets the lock).
        let startedBeforeKill = firstAnswer["error"]?["data"]?["reason"] == "locked" ? 5 : 1

        let second = try LaunchedProcess("identity", name: "identity", arguments: ["--scrypt-log-n", "14"], directory: directory)
        defer { second.kill() }
        let tally = try pipelined(try LineClient(second.endpoint, timeoutMilliseconds: 30_000), count: 30) { index in
            self.loginParams("fred", password: "another guess \(index)", device: "attacker")
        }
        XCTAssertLessThanOrEqual(startedBeforeKill + (tally["invalid_credentials"] ?? 0), 5, "\(firstAnswer) then \(tally)")
        XCTAssertEqual(tally.values.reduce(0, +), 30)
    }

    func testTheOwnersDeviceTokenLogsInThroughTheGatewayAndTheHTTPDoorWhileGuessersAreLocked() throws {
        let gateway = try gateway()
        try register(gateway, "erin")
        let first = try gateway.result("identity.login", loginParams("erin", password: Self.password))
        let token = try XCTUnwrap(first["device_token"]?.stringValue)
        XCTAssertTrue(OpaqueToken.isWellFormed(token, prefix: "lkd_"))

        let identity = try direct("identity")
        let guesses = try pipelined(identity, count: 8) { index in self.loginParams("erin", password: "wrong guess \(index)", device: "attacker") }
        XCTAssertEqual(guesses, ["invalid_credentials": 5, "locked": 3])
        assertError(try gateway.call("identity.login", loginParams("erin", password: Self.password)), "locked")
        assertError(try gateway.call("identity.login", loginParams("erin", password: Self.password, token: .string(OpaqueToken.make(prefix: "lkd_")))), "locked")

        let line = try gateway.result("identity.login", loginParams("erin", password: Self.password, token: .string(token)))
        let rotated = try XCTUnwrap(line["device_token"]?.stringValue)
        XCTAssertNotEqual(rotated, token)
        XCTAssertNotNil(line["session"]?.stringValue)

        let endpoint = try XCTUnwrap(stack.httpGateway, "the gateway runs the HTTP door")
        let http = try curlPost("http://\(endpoint.description)/v1/identity/login", loginParams("erin", password: Self.password, token: .string(rotated)))
        XCTAssertEqual(http.status, 200, "\(String(describing: http.body))")
        XCTAssertTrue(OpaqueToken.isWellFormed(http.body?["result"]?["device_token"]?.stringValue ?? "", prefix: "lkd_"))
    }

    private func curlPost(_ url: String, _ body: JSON) throws -> (status: Int, body: JSON?) {
        let response = try Curl.run(["-H", "Content-Type: application/json", "--data", body.text, url])
        return (response.status, try? JSONParser.parse(response.body))
    }
}
