import Foundation
import LineProtocol
import RPC
import StackLauncher
import XCTest

/// A test case that runs the real executables (gateway + four services) on ephemeral ports
/// in a temporary directory, and stops them all in `tearDown`, on success and on failure.
class StackTestCase: XCTestCase {
    var stack: Stack!
    var dataDirectory: String!

    /// Override to change the environment or the number of verification replicas.
    func stackOptions(_ options: inout Stack.Options) {}

    override func setUpWithError() throws {
        dataDirectory = NSTemporaryDirectory() + "latchkey-e2e-\(UUID().uuidString.prefix(8))"
        var options = Stack.Options(binDirectory: Stack.siblingBinaryDirectory(), dataDirectory: dataDirectory)
        // Cheap password hashing keeps the suite fast; production cost is measured by `latchkey bench login`.
        options.environment["LATCHKEY_SCRYPT_LOG_N"] = "10"
        stackOptions(&options)
        stack = try Stack.start(options)
    }

    override func tearDown() {
        stack?.stop()
        if let dataDirectory { try? FileManager.default.removeItem(atPath: dataDirectory) }
    }

    func gateway() throws -> LineClient { try LineClient(stack.gateway) }

    /// The device tokens the app keeps, by username and device.
    private var appDeviceTokens: [String: JSON] = [:]

    /// `identity.login` as the app makes it: with the device token it kept from its last login on
    /// this device, keeping the one the answer gives (what makes the device trusted once it paid a factor).
    func appLogin(_ client: LineClient, _ username: String, password: String, device: String) throws -> JSON {
        let key = username + "/" + device
        var params: [String: JSON] = ["username": .string(username), "password": .string(password), "device_id": .string(device)]
        params["device_token"] = appDeviceTokens[key]
        let answer = try client.result("identity.login", .object(params))
        appDeviceTokens[key] = answer["device_token"]
        return answer
    }

    func direct(_ service: String, replica: Int = 0) throws -> LineClient { try LineClient(stack.endpoint(service, replica: replica)) }

    /// The messages delivered so far (`outbox.jsonl`), newest last.
    func outbox() -> [JSON] {
        guard let text = try? String(contentsOfFile: stack.outboxPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
    }

    /// The messages delivered so far but the link registration mails to prove an address.
    func outboxAfterRegistration() -> [JSON] {
        outbox().filter { !($0["text"]?.stringValue ?? "").contains("://verify-email?token=") }
    }

    /// The code in the newest outbox message for `requestID` (voice texts speak it digit by digit).
    func code(for requestID: String, channel: String = "sms", timeoutSeconds: Double = 20) throws -> String {
        try Self.code(outboxPath: stack.outboxPath, for: requestID, channel: channel, timeoutSeconds: timeoutSeconds)
    }

    /// The same, from any thread: reads the outbox at `outboxPath` until the message arrives.
    static func code(outboxPath: String, for requestID: String, channel: String = "sms", timeoutSeconds: Double = 20) throws -> String {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while Date() < deadline {
            let text = (try? String(contentsOfFile: outboxPath, encoding: .utf8)) ?? ""
            let messages = text.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
            if let message = messages.last(where: { $0["request_id"]?.stringValue == requestID && $0["channel"]?.stringValue == channel }),
                let body = message["text"]?.stringValue
            {
                guard let code = code(in: body, spoken: channel == "voice") else { throw MissingMessage(description: "no code in: \(body)") }
                return code
            }
            usleep(50_000)
        }
        throw MissingMessage(description: "no \(channel) message for \(requestID) within \(timeoutSeconds) s")
    }

    static func code(in text: String, spoken: Bool) -> String? {
        let pattern = spoken ? "(\\d(, \\d){3,9})" : "\\b(\\d{4,10})\\b"
        let expression = try! NSRegularExpression(pattern: pattern)
        guard let match = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
            let range = Range(match.range(at: 1), in: text)
        else { return nil }
        return text[range].filter(\.isNumber)
    }

    /// Asserts an error answer with the given reason and returns it.
    @discardableResult
    func assertError(_ response: RPCResponse, _ reason: String, file: StaticString = #filePath, line: UInt = #line) -> RPCError? {
        guard case .failure(let error) = response.outcome else {
            XCTFail("expected \(reason), got a result", file: file, line: line)
            return nil
        }
        XCTAssertEqual(error.reasonText, reason, error.message, file: file, line: line)
        return error
    }
}

struct MissingMessage: Error, CustomStringConvertible {
    let description: String
}
