import CPostgres

/// Bound values in libpq's form: integers, reals and text as text with their type, blobs as
/// binary `bytea`, NULL as a null pointer. The values never touch the SQL text.
struct PostgresParameters {
    private enum TypeID {
        static let bytea: UInt32 = 17
        static let int8: UInt32 = 20
        static let text: UInt32 = 25
        static let float8: UInt32 = 701
    }

    private var types: [UInt32] = []
    private var payloads: [[UInt8]?] = []
    private var formats: [Int32] = []

    init(_ bindings: [SQLValue]) {
        for value in bindings {
            switch value {
            case .null: append(0, nil, 0)
            case .integer(let number): append(TypeID.int8, Array(String(number).utf8), 0)
            case .real(let number): append(TypeID.float8, Array("\(number)".utf8), 0)
            case .text(let text): append(TypeID.text, Array(text.utf8), 0)
            case .blob(let bytes): append(TypeID.bytea, bytes, 1)
            }
        }
    }

    private mutating func append(_ type: UInt32, _ payload: [UInt8]?, _ format: Int32) {
        types.append(type)
        // Text parameters are C strings: NUL-terminated. Binary ones carry their length.
        payloads.append(format == 0 ? payload.map { $0 + [0] } : payload)
        formats.append(format)
    }

    func withPointers<R>(
        _ body: (UnsafePointer<UInt32>?, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> R
    ) -> R {
        var pointers: [UnsafePointer<CChar>?] = []
        var lengths: [Int32] = []
        var storage: [UnsafeMutableRawPointer] = []
        defer { storage.forEach { $0.deallocate() } }
        for payload in payloads {
            guard let payload else {
                pointers.append(nil)
                lengths.append(0)
                continue
            }
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(payload.count, 1), alignment: 1)
            payload.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            storage.append(buffer)
            pointers.append(UnsafePointer(buffer.assumingMemoryBound(to: CChar.self)))
            lengths.append(Int32(payload.count))
        }
        return types.withUnsafeBufferPointer { types in
            pointers.withUnsafeBufferPointer { values in
                lengths.withUnsafeBufferPointer { lengths in
                    formats.withUnsafeBufferPointer { formats in
                        body(types.baseAddress, values.baseAddress, lengths.baseAddress, formats.baseAddress)
                    }
                }
            }
        }
    }
}

/// `?` placeholders to PostgreSQL's `$1`, `$2`, ... outside string literals, quoted names and comments.
enum PostgresPlaceholders {
    static func rewrite(_ sql: String) -> (text: String, count: Int) {
        var output = ""
        output.reserveCapacity(sql.utf8.count + 8)
        var count = 0
        var quote: Character?
        var lineComment = false
        var previous: Character?
        for character in sql {
            if lineComment {
                if character == "\n" { lineComment = false }
            } else if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "-" && previous == "-" {
                lineComment = true
            } else if character == "?" {
                count += 1
                output += "$\(count)"
                previous = character
                continue
            }
            output.append(character)
            previous = character
        }
        return (output, count)
    }
}
