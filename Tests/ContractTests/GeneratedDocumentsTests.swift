import Contract
import Foundation
import LineProtocol
import XCTest

/// protocol/methods.json, protocol/openapi.json and the method tables of the service pages are
/// written from the declarations and committed: a change to a declaration that is not
/// regenerated fails here.
/// `LATCHKEY_REGENERATE_PROTOCOL=1 swift test --filter GeneratedDocumentsTests` rewrites them.
final class GeneratedDocumentsTests: XCTestCase {
    private func protocolPath(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("protocol").appendingPathComponent(name).path
    }

    private func check(_ name: String, _ document: JSON) throws {
        try check(name, generated: PrettyJSON.text(document))
    }

    private func check(_ name: String, generated: String) throws {
        let path = protocolPath(name)
        if ProcessInfo.processInfo.environment["LATCHKEY_REGENERATE_PROTOCOL"] != nil {
            try generated.write(toFile: path, atomically: true, encoding: .utf8)
        }
        let committed = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertEqual(committed, generated, "protocol/\(name) is not what the contract says: regenerate with LATCHKEY_REGENERATE_PROTOCOL=1")
    }

    func testMethodsDocumentIsGeneratedFromTheContract() throws {
        try check("methods.json", MethodsDocument.json())
    }

    func testOpenAPIDocumentIsGeneratedFromTheContract() throws {
        try check("openapi.json", OpenAPIDocument.json())
    }

    func testEachServicePagesMethodTableIsGeneratedFromTheContract() throws {
        for service in ["identity", "verification", "accounts", "reset"] {
            let name = "\(service).md"
            let committed = try String(contentsOfFile: protocolPath(name), encoding: .utf8)
            let page = try XCTUnwrap(MethodsTable.page(committed, service: service), "protocol/\(name) has no \(MethodsTable.begin(service)) section")
            try check(name, generated: page)
        }
    }

    func testPrettyTextParsesBackToTheSameValue() throws {
        let document = OpenAPIDocument.json()
        let text = PrettyJSON.text(document)
        XCTAssertEqual(try JSONParser.parse(Array(text.utf8), limits: JSONLimits(maxDepth: 64, maxBytes: 1 << 22, maxStringBytes: 1 << 20)), document)
    }
}
