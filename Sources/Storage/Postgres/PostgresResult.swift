import CPostgres

/// Rows of a text-format libpq result, typed by each column's type: integers and booleans as
/// `.integer` (booleans 0/1, as SQLite stores them), floating and numeric as `.real`, `bytea`
/// as `.blob`, the rest as `.text`. Stores read them with the same accessors on both backends.
enum PostgresResult {
    private enum TypeID {
        static let bool: UInt32 = 16
        static let bytea: UInt32 = 17
        static let integers: Set<UInt32> = [20, 21, 23, 26]
        static let reals: Set<UInt32> = [700, 701, 1700]
    }

    static func rows(_ result: OpaquePointer?, _ pq: LibPQ) -> [Row] {
        let rowCount = Int(pq.ntuples(result))
        let columnCount = Int(pq.nfields(result))
        guard rowCount > 0 else { return [] }
        var names: [String] = []
        var types: [UInt32] = []
        for column in 0..<columnCount {
            names.append(pq.fname(result, Int32(column)).map { String(cString: $0) } ?? "")
            types.append(pq.ftype(result, Int32(column)))
        }
        let index = ColumnIndex(names: names)
        var rows: [Row] = []
        rows.reserveCapacity(rowCount)
        for row in 0..<rowCount {
            var values: [SQLValue] = []
            values.reserveCapacity(columnCount)
            for column in 0..<columnCount {
                values.append(value(result, Int32(row), Int32(column), type: types[column], pq))
            }
            rows.append(Row(index: index, values: values))
        }
        return rows
    }

    private static func value(_ result: OpaquePointer?, _ row: Int32, _ column: Int32, type: UInt32, _ pq: LibPQ) -> SQLValue {
        if pq.getisnull(result, row, column) == 1 { return .null }
        let length = Int(pq.getlength(result, row, column))
        let bytes = UnsafeRawBufferPointer(start: pq.getvalue(result, row, column), count: length)
        let text = String(decoding: bytes, as: UTF8.self)
        switch type {
        case TypeID.bool: return .integer(text == "t" ? 1 : 0)
        case _ where TypeID.integers.contains(type): return Int64(text).map(SQLValue.integer) ?? .text(text)
        case _ where TypeID.reals.contains(type): return Double(text).map(SQLValue.real) ?? .text(text)
        case TypeID.bytea: return .blob(hexBytes(bytes))
        default: return .text(text)
        }
    }

    /// `bytea` in its text form: `\x` then two hex digits a byte.
    private static func hexBytes(_ text: UnsafeRawBufferPointer) -> [UInt8] {
        guard text.count >= 2 else { return [] }
        var bytes: [UInt8] = []
        bytes.reserveCapacity((text.count - 2) / 2)
        var index = 2
        while index + 1 < text.count {
            bytes.append(nibble(text[index]) << 4 | nibble(text[index + 1]))
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8 {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        default: return digit - UInt8(ascii: "A") + 10
        }
    }
}
