import Foundation
import LineProtocol
import ServiceKit
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

    func direct(_ service: String, replica: Int = 0) throws -> LineClient { try LineClient(stack.endpoint(service, replica: replica)) }

    /// The messages delivered so far (`outbox.jsonl`), newest last.
    func outbox() -> [JSON] {
        guard let text = try? String(contentsOfFile: stack.outboxPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
    }

    /// Asserts an error answer with the given reason and returns it.
    @discardableResult
    func assertError(_ response: RPCResponse, _ reason: String, file: StaticString = #filePath, line: UInt = #line) -> RPCError? {
        guard case .failure(let error) = response.outcome else {
            XCTFail("expected \(reason), got a result", file: file, line: line)
            return nil
        }
        XCTAssertEqual(error.reason, reason, error.message, file: file, line: line)
        return error
    }
}
