import Foundation
import LineProtocol
import ServerTestSupport
import TestSupport
import XCTest
@testable import Gateway

/// protocol/methods.json, the machine-readable table of methods, stays in step with the
/// gateway's policy: the same public methods, with the same access, and no internal method
/// reachable from outside.
final class MethodsDocumentTests: XCTestCase {
    private func document() throws -> JSON {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("protocol/methods.json").path
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: path), path)
        return try JSONParser.parse([UInt8](bytes), limits: JSONLimits(maxDepth: 16, maxBytes: 1 << 20, maxStringBytes: 1 << 20))
    }

    func testPublicMethodsAndTheirAccessMatchThePolicyTable() throws {
        let published = try XCTUnwrap(try document()["public"]?.objectValue)
        XCTAssertEqual(Set(published.keys), Set(PolicyTable.methods.keys))
        for (name, policy) in PolicyTable.methods {
            XCTAssertEqual(published[name]?["access"]?.stringValue, policy.access.rawValue, name)
            XCTAssertEqual(published[name]?["service"]?.stringValue, policy.service, name)
        }
    }

    func testInternalMethodsAreNeverInThePolicyTable() throws {
        let internals = try XCTUnwrap(try document()["internal"]?.objectValue)
        XCTAssertFalse(internals.isEmpty)
        for name in internals.keys { XCTAssertNil(PolicyTable.methods[name], "\(name) is internal but reachable from outside") }
    }

    func testEveryErrorReasonIsAKnownSlug() throws {
        let known = Set(Reason.allCases.map(\.rawValue))
        let doc = try document()
        for section in ["public", "internal"] {
            for (name, method) in doc[section]?.objectValue ?? [:] {
                for reason in method["errors"]?.arrayValue ?? [] {
                    XCTAssertTrue(known.contains(reason.stringValue ?? ""), "\(name): \(reason)")
                }
            }
        }
    }
}
