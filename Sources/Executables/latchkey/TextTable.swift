import FoundationEssentials
import LineProtocol
import Platform
import Runtime

/// Rows printed under upper-case headers, each column as wide as its widest cell.
struct TextTable {
    let headers: [String]
    var rows: [[String]] = []

    init(_ headers: [String]) { self.headers = headers }

    mutating func add(_ row: [String]) {
        precondition(row.count == headers.count, "a row has one cell per column")
        rows.append(row)
    }

    var text: String {
        let all = [headers] + rows
        let widths = headers.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.paddedRight(widths[column])
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    /// Unix seconds as `2026-01-02 03:04:05Z` (UTC); `-` for none.
    static func time(_ value: JSON?) -> String {
        guard let seconds = value?.intValue else { return "-" }
        return LogTimestamp.readable(unixSeconds: Int64(seconds), withSeconds: true) + "Z"
    }

    /// A JSON member as a cell: strings bare, numbers as digits, null as `-`.
    static func cell(_ value: JSON?) -> String {
        switch value {
        case .string(let text)?: text
        case .int(let number)?: String(number)
        case .bool(let flag)?: String(flag)
        case nil, .null?: "-"
        case let other?: String(decoding: other.encoded(), as: UTF8.self)
        }
    }
}
