@testable import RPC
import TestSupport
import XCTest

/// The method table against a `Dictionary` holding the same names: every name put in is found
/// with its value, and no other (a prefix, an extension, one byte changed, other lengths, the
/// empty name, non-ASCII names), across the table's growth.
final class MethodTableTests: XCTestCase {
    func testEveryNamePutInIsFoundAndNoOther() {
        var random = SeededGenerator(seed: 19)
        var table = MethodTable<Int>()
        var model: [String: Int] = [:]
        let services = ["identity", "verification", "accounts", "reset", "gateway", "ідентичність"]
        for (number, service) in services.enumerated() {
            for method in 0..<30 {
                let name = "\(service).method_\(method)"
                table.insert(number * 100 + method, for: name)
                model[name] = number * 100 + method
                for known in model.keys.shuffled(using: &random).prefix(5) {
                    XCTAssertEqual(table.value(for: known), model[known], known)
                }
            }
        }
        XCTAssertEqual(table.names.sorted(), model.keys.sorted())
        for (name, value) in model {
            XCTAssertEqual(table.value(for: name), value, name)
            let others = [String(name.dropLast()), name + "x", name + "\u{0}", String(name.dropFirst()), name.uppercased(), " " + name]
            for other in others where model[other] == nil {
                XCTAssertNil(table.value(for: other), "\(other) was never put in")
            }
        }
        for length in 0..<40 {
            let made = String((0..<length).map { _ in Character(UnicodeScalar(UInt8.random(in: 0x20...0x7E, using: &random))) })
            if model[made] == nil { XCTAssertNil(table.value(for: made), made) }
        }
    }

    func testTheEmptyNameIsANameLikeAnyOther() {
        var table = MethodTable<String>()
        XCTAssertNil(table.value(for: ""))
        table.insert("empty", for: "")
        table.insert("a", for: "a")
        XCTAssertEqual(table.value(for: ""), "empty")
        XCTAssertEqual(table.value(for: "a"), "a")
        XCTAssertNil(table.value(for: "b"))
    }
}
