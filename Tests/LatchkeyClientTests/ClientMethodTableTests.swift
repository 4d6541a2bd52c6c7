import Foundation
import XCTest

@testable import LatchkeyClient

/// The client against `protocol/methods.json`, read at test time: a public method the table
/// gains without a typed call here, or a parameter or result member that differs, fails.
final class ClientMethodTableTests: XCTestCase {
    struct Entry: Decodable {
        struct Params: Decodable {
            let required: [String]
            let optional: [String]
        }
        let access: String
        let params: Params
        let result: [String]
    }

    static func publicMethods() throws -> [String: Entry] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../protocol/methods.json")
        struct Table: Decodable { let `public`: [String: Entry] }
        return try JSONDecoder().decode(Table.self, from: Data(contentsOf: url)).public
    }

    static var calls: [String: any LatchkeyRequest.Type] {
        Dictionary(uniqueKeysWithValues: LatchkeyClient.requestTypes.map { ($0.method, $0) })
    }

    func testEveryPublicMethodOfTheTableHasATypedCall() throws {
        let missing = try Self.publicMethods().keys.filter { Self.calls[$0] == nil }.sorted()
        XCTAssertEqual(missing, [], "public methods without a typed call in LatchkeyClient")
    }

    func testEveryTypedCallIsAPublicMethodOfTheTable() throws {
        let table = try Self.publicMethods()
        XCTAssertEqual(Self.calls.keys.filter { table[$0] == nil }.sorted(), [])
        XCTAssertEqual(Self.calls.count, LatchkeyClient.requestTypes.count, "one typed call per method")
    }

    func testEachCallSendsExactlyTheTablesParameters() throws {
        for (method, entry) in try Self.publicMethods() {
            guard let call = Self.calls[method] else { continue }
            let keyed = try XCTUnwrap(call as? any WireKeyed.Type, "\(method): request members are not listed")
            // The session travels as `Authorization: Bearer`; the table lists it as a parameter.
            var sent = Set(keyed.wireKeys)
            if call.session != .none { sent.insert("session") }
            XCTAssertEqual(sent, Set(entry.params.required + entry.params.optional), method)
            let sessionInTable = entry.params.required.contains("session") ? SessionUse.required
                : entry.params.optional.contains("session") ? .optional : .none
            XCTAssertEqual(call.session, sessionInTable, "\(method): session use")
            XCTAssertEqual(call.session == .none, entry.access == "open" && sessionInTable == .none, "\(method): access \(entry.access)")
        }
    }

    func testEachCallDecodesExactlyTheTablesResultMembers() throws {
        for (method, entry) in try Self.publicMethods() {
            guard let call = Self.calls[method] else { continue }
            let keyed = try XCTUnwrap(Self.responseType(of: call) as? any WireKeyed.Type, "\(method): result members are not listed")
            XCTAssertEqual(Set(keyed.wireKeys), Set(entry.result), method)
        }
    }

    /// Only the calls the gateway itself would repeat are repeated by the client.
    func testOnlyReadsAndKeyedWritesAreRetried() throws {
        let writes = ["identity.register", "identity.login", "identity.preferences", "identity.enroll_key", "identity.verify_key",
                      "identity.key_login", "verification.start", "verification.check", "verification.cancel", "verification.next",
                      "accounts.confirm", "reset.request", "reset.complete", "identity.totp_enroll", "identity.totp_activate",
                      "identity.totp_verify", "identity.recovery_codes", "identity.recovery_verify"]
        for method in writes { XCTAssertEqual(Self.calls[method]?.retry, .never, method) }
        XCTAssertEqual(Self.calls["accounts.transfer"]?.retry, .idempotencyKey)
    }

    private static func responseType<Request: LatchkeyRequest>(of _: Request.Type) -> Any.Type { Request.Response.self }
}
