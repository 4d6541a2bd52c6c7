import Foundation
import LatchkeyClient
import LineProtocol
import RPC
import StackLauncher
import TestSupport
import XCTest

/// Runs the real stack (gateway with its HTTP door + four services) on ephemeral ports with the
/// seed app's demo user, and points clients at the HTTP door. Stops everything in tearDown.
class ClientStackTestCase: XCTestCase {
    var stack: Stack!
    var dataDirectory: String!
    let demoPassword = "correct horse battery staple"

    /// Override to change the environment of the processes (rate limits...).
    func stackOptions(_ options: inout Stack.Options) {}

    override func setUpWithError() throws {
        dataDirectory = NSTemporaryDirectory() + "latchkey-client-\(UUID().uuidString.prefix(8))"
        var options = Stack.Options(binDirectory: Stack.siblingBinaryDirectory(), dataDirectory: dataDirectory)
        // Cheap password hashing keeps the suite fast; production cost is measured by `latchkey bench login`.
        options.environment["LATCHKEY_SCRYPT_LOG_N"] = "10"
        stackOptions(&options)
        stack = try Stack.start(options)
        try createDemoUser()
    }

    override func tearDown() {
        stack?.stop()
        if let dataDirectory { try? FileManager.default.removeItem(atPath: dataDirectory) }
    }

    var baseURL: URL {
        get throws {
            let door = try XCTUnwrap(stack.httpGateway, "the gateway runs its HTTP door on an ephemeral port")
            return try XCTUnwrap(URL(string: "http://\(door.description)"))
        }
    }

    func client(store: any SessionStore = InMemorySessionStore(), retryPolicy: RetryPolicy = .standard) throws -> LatchkeyClient {
        LatchkeyClient(baseURL: try baseURL, store: store, retryPolicy: retryPolicy)
    }

    /// What `latchkey up --demo` creates: `demo`, phone proven, 5,000.00 checking and 10,000.00 saving.
    private func createDemoUser() throws {
        let registered = try LineClient(stack.gateway).result("identity.register", [
            "username": "demo", "password": .string(demoPassword), "email": "demo@example.com", "phone": "+15555550100",
        ])
        let userID = try XCTUnwrap(registered["user_id"])
        _ = try LineClient(stack.endpoint("identity")).result("identity.prove_phone", ["user_id": userID, "phone": "+15555550100"])
        let accounts = try LineClient(stack.endpoint("accounts"))
        for (account, amount) in [("checking", 500_000), ("saving", 1_000_000)] {
            _ = try accounts.result("accounts.deposit", [
                "user_id": userID, "account": .string(account), "amount": .int(Int64(amount)), "idempotency_key": .string("demo-\(account)"),
            ])
        }
    }

    /// Signs the demo user in on `deviceID` (new devices owe `sms`) and pays the factor with the outbox's code.
    func signInWithCode(_ client: LatchkeyClient, deviceID: String = "iphone-1") async throws {
        let signedIn = try await client.signIn(username: "demo", password: demoPassword, deviceID: deviceID)
        XCTAssertEqual(signedIn.requiredFactors, [.sms])
        let started = try await client.startCode(channel: .sms)
        let checked = try await client.checkCode(try await code(for: started.requestID), requestID: started.requestID)
        XCTAssertEqual(checked.aal, 2)
    }

    /// The messages delivered so far (`outbox.jsonl`), oldest first.
    func outbox() -> [JSON] {
        guard let text = try? String(contentsOfFile: stack.outboxPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
    }

    /// Waits (bounded) until the outbox holds a message matching `predicate`, and returns the newest such.
    func awaitMessage(timeoutSeconds: Double = 10, _ predicate: (JSON) -> Bool) async throws -> JSON {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while Date() < deadline {
            if let message = outbox().last(where: predicate) { return message }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        throw MissingMessage(description: "no matching outbox message within \(timeoutSeconds) s")
    }

    /// The code of the newest message for `requestID` (voice texts speak it digit by digit).
    func code(for requestID: String, channel: String = "sms") async throws -> String {
        let message = try await awaitMessage { $0["request_id"]?.stringValue == requestID && $0["channel"]?.stringValue == channel }
        let text = try XCTUnwrap(message["text"]?.stringValue)
        let pattern = channel == "voice" ? "(\\d(, \\d){3,9})" : "\\b(\\d{4,10})\\b"
        let expression = try NSRegularExpression(pattern: pattern)
        let match = try XCTUnwrap(expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)), "no code in the message")
        return String(text[try XCTUnwrap(Range(match.range(at: 1), in: text))].filter(\.isNumber))
    }

    /// The gateway's count of calls to `method`, and of those answered `reason`, from its metrics listener.
    func gatewayCount(_ method: String, reason: String? = nil) throws -> Int {
        let metrics = try OperatorListener.metrics(try XCTUnwrap(stack.metricsEndpoint(), "the stack's gateway has a metrics listener"))
        return Int(reason.map { metrics.errors(method, reason: $0) } ?? metrics.requests(method))
    }
}

struct MissingMessage: Error, CustomStringConvertible {
    let description: String
}

/// Asserts that `body` throws exactly `expected`.
func XCTAssertThrowsLatchkeyError<T>(
    _ expected: LatchkeyError, _ body: () async throws -> T, file: StaticString = #filePath, line: UInt = #line
) async {
    do {
        _ = try await body()
        XCTFail("expected \(expected), got a result", file: file, line: line)
    } catch let error as LatchkeyError {
        XCTAssertEqual(error, expected, file: file, line: line)
    } catch {
        XCTFail("expected \(expected), got \(error)", file: file, line: line)
    }
}

/// `locked` with a `retry_after` of at most `lockSeconds` and at least 1: the server counts the
/// lock from the failure that set it, so a slow run sees a second or two less.
func XCTAssertThrowsLocked<T>(
    lockSeconds: Int, _ body: () async throws -> T, file: StaticString = #filePath, line: UInt = #line
) async {
    guard case .locked(let retryAfter)? = await latchkeyError(body, file: file, line: line) else {
        return XCTFail("expected locked", file: file, line: line)
    }
    XCTAssertTrue((1...lockSeconds).contains(retryAfter), "retry_after \(retryAfter) outside 1...\(lockSeconds)", file: file, line: line)
}

/// The error `body` throws, for assertions on its data.
func latchkeyError<T>(_ body: () async throws -> T, file: StaticString = #filePath, line: UInt = #line) async -> LatchkeyError? {
    do {
        _ = try await body()
        XCTFail("expected an error, got a result", file: file, line: line)
    } catch let error as LatchkeyError {
        return error
    } catch {
        XCTFail("expected a LatchkeyError, got \(error)", file: file, line: line)
    }
    return nil
}
