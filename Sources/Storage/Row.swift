/// One result row. Columns are looked up by the name the query gave them (use `AS` to rename).
/// Typed accessors throw `StorageError.column` naming the column and the types, never the value.
public struct Row: Sendable {
    /// Shared by every row of one result, so a row costs only its values.
    let index: ColumnIndex
    public let values: [SQLValue]

    init(index: ColumnIndex, values: [SQLValue]) {
        self.index = index
        self.values = values
    }

    /// The column's value; `.null` when the row has no such column (use the typed accessors to fail loudly).
    public subscript(_ column: String) -> SQLValue {
        guard let i = index.position(of: column) else { return .null }
        return values[i]
    }

    /// Column names, in result order (the first of duplicate names only).
    public var columns: [String] { index.uniqueNames }

    private func value(_ column: String) throws(StorageError) -> SQLValue {
        guard let i = index.position(of: column) else { throw .column("no column named '\(column)' in the result") }
        return values[i]
    }

    private func mismatch(_ column: String, _ expected: String, _ found: SQLValue) -> StorageError {
        .column("column '\(column)' is \(found.typeName), expected \(expected)")
    }

    public func int(_ column: String) throws(StorageError) -> Int64 {
        let v = try value(column)
        guard case .integer(let x) = v else { throw mismatch(column, "INTEGER", v) }
        return x
    }

    /// REAL, or an INTEGER widened to Double.
    public func double(_ column: String) throws(StorageError) -> Double {
        let v = try value(column)
        switch v {
        case .real(let x): return x
        case .integer(let x): return Double(x)
        default: throw mismatch(column, "REAL", v)
        }
    }

    public func string(_ column: String) throws(StorageError) -> String {
        let v = try value(column)
        guard case .text(let x) = v else { throw mismatch(column, "TEXT", v) }
        return x
    }

    public func blob(_ column: String) throws(StorageError) -> [UInt8] {
        let v = try value(column)
        guard case .blob(let x) = v else { throw mismatch(column, "BLOB", v) }
        return x
    }

    /// INTEGER 0 is false, any other INTEGER is true (the encoding of `SQLValue(Bool)`).
    public func bool(_ column: String) throws(StorageError) -> Bool {
        try int(column) != 0
    }

    public func optionalInt(_ column: String) throws(StorageError) -> Int64? {
        if try value(column) == .null { return nil }
        return try int(column)
    }

    public func optionalDouble(_ column: String) throws(StorageError) -> Double? {
        if try value(column) == .null { return nil }
        return try double(column)
    }

    public func optionalString(_ column: String) throws(StorageError) -> String? {
        if try value(column) == .null { return nil }
        return try string(column)
    }

    public func optionalBlob(_ column: String) throws(StorageError) -> [UInt8]? {
        if try value(column) == .null { return nil }
        return try blob(column)
    }
}
