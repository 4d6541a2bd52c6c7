import Contract
import Foundation
import XCTest

/// The hand-written reference (internal.md's tables, the signature lines of the service pages)
/// names each method's parameters and error reasons; those names must be the declarations' own,
/// so a page cannot promise a parameter, a result member or an error the method does not have,
/// nor leave one out. The service pages' method tables are generated (GeneratedDocumentsTests).
final class ReferencePagesTests: XCTestCase {
    private static let protocolFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("protocol")

    private func page(_ name: String) throws -> [String] {
        try String(contentsOf: Self.protocolFolder.appendingPathComponent(name), encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    func testTablesNameEachMethodsOwnParametersAndErrors() throws {
        var rows = 0
        for name in ["internal.md"] {
            for (number, line) in try page(name).enumerated() {
                guard let row = MethodRow(line) else { continue }
                guard let method = Contract.method(named: row.method) else {
                    XCTFail("\(name):\(number + 1) names \(row.method), which no declaration has")
                    continue
                }
                let form = method.internalForm ?? method.form
                XCTAssertEqual(row.params, Set(form.params.map(\.name)), "\(name):\(number + 1) \(row.method) params")
                if let errors = row.errors {
                    let universal = Set(MethodContract.universalReasons.map(\.rawValue))
                    XCTAssertEqual(errors.subtracting(universal), Set(form.errors.map(\.rawValue)).subtracting(universal), "\(name):\(number + 1) \(row.method) errors")
                }
                rows += 1
            }
        }
        XCTAssertGreaterThan(rows, 25, "the tables were read")
    }

    func testSignatureLinesNameEachMethodsOwnParameters() throws {
        var lines = 0
        for (number, line) in try page("identity.md").enumerated() {
            guard let signature = Signature(line) else { continue }
            let method = try XCTUnwrap(Contract.method(named: signature.method), "identity.md:\(number + 1)")
            // A signature may show one of a method's shapes (a challenge for a session, or for a username).
            XCTAssertTrue(signature.params.isSubset(of: Set(method.form.params.map(\.name))), "identity.md:\(number + 1) \(signature.method) params")
            lines += 1
        }
        XCTAssertGreaterThan(lines, 30, "the signature lines were read")
    }
}

/// A row of internal.md's tables: `| \`svc.method\` | params | result | [errors |]` (the
/// internal form of a method that has one).
private struct MethodRow {
    let method: String
    let params: Set<String>
    let errors: Set<String>?

    init?(_ line: String) {
        let cells = Self.cells(line)
        guard cells.count >= 3, let method = Names.backticked(cells[0]).first, method.contains("."), !cells[0].contains("/") else { return nil }
        self.method = method
        params = Names.listed(cells[1])
        errors = cells.count >= 4 ? Names.listed(cells[3]) : nil
    }

    /// The cells between the pipes; `\|` stays inside a cell (it reads "one or the other").
    private static func cells(_ line: String) -> [String] {
        guard line.hasPrefix("|") else { return [] }
        var cells: [String] = []
        var current = ""
        var previous: Character = " "
        for character in line.dropFirst() {
            if character == "|" && previous != "\\" {
                cells.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
            } else {
                current.append(character)
            }
            previous = character
        }
        return cells
    }
}

/// `    svc.method {a, b?} -> {...}`.
private struct Signature {
    let method: String
    let params: Set<String>

    init?(_ line: String) {
        guard line.hasPrefix("    "), let open = line.firstIndex(of: "{"), let close = line.firstIndex(of: "}"), open < close,
            line.contains("->")
        else { return nil }
        let head = line[line.startIndex..<open].trimmingCharacters(in: .whitespaces)
        guard head.contains("."), head.allSatisfy({ $0.isLowercase || $0 == "." || $0 == "_" }) else { return nil }
        method = head
        params = Names.split(String(line[line.index(after: open)..<close]))
    }
}

private enum Names {
    /// The text of each `code span`.
    static func backticked(_ text: String) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// The names a cell lists in its code spans, leaving out what parentheses explain and the
    /// members of nested values (`sessions: [{...}]` lists `sessions`).
    static func listed(_ cell: String) -> Set<String> {
        var text = ""
        var depth = 0
        for character in cell {
            if "([{".contains(character) {
                depth += 1
            } else if ")]}".contains(character) {
                depth = max(0, depth - 1)
            } else if depth == 0 {
                text.append(character)
            }
        }
        return backticked(text).reduce(into: Set<String>()) { $0.formUnion(split($1)) }
    }

    /// `a, b?, c\|d, e: value` as names.
    static func split(_ text: String) -> Set<String> {
        Set(
            text.split(whereSeparator: { $0 == "," || $0 == "|" }).map {
                ($0.split(separator: ":").first ?? "").trimmingCharacters(in: CharacterSet(charactersIn: " ?\\"))
            }.filter { !$0.isEmpty && $0.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "_" } })
    }
}
