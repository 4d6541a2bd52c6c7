/// Compact, deterministic encoding: no whitespace, object keys sorted, strings escaped per
/// RFC 8259 (non-ASCII stays UTF-8), doubles in shortest round-trip form, non-finite doubles as `null`.
extension JSON: LineEncodable {
    public var text: String { String(decoding: encoded(), as: UTF8.self) }

    public func append(to buffer: inout [UInt8]) { write(to: &buffer) }

    /// The value into any sink: an id or a small value gathered with the rest of its line.
    func write<Sink: ByteSink>(to buffer: inout Sink) {
        switch self {
        case .null: buffer.append(literal: "null")
        case .bool(let value): buffer.append(literal: value ? "true" : "false")
        case .int(let value): JSON.appendInteger(value, to: &buffer)
        case .double(let value): JSON.appendDouble(value, to: &buffer)
        case .string(let value): JSON.appendString(value, to: &buffer)
        case .array(let elements):
            buffer.append(0x5B)
            for (index, element) in elements.enumerated() {
                if index > 0 { buffer.append(0x2C) }
                element.write(to: &buffer)
            }
            buffer.append(0x5D)
        case .object(let members):
            buffer.append(0x7B)
            if members.count <= JSON.smallObjectCount {
                JSON.appendSmallObjectMembers(members, to: &buffer)
            } else {
                for (index, key) in members.keys.sorted().enumerated() {
                    if index > 0 { buffer.append(0x2C) }
                    JSON.appendString(key, to: &buffer)
                    buffer.append(0x3A)
                    members[key]!.write(to: &buffer)
                }
            }
            buffer.append(0x7D)
        }
    }

    /// The object these members make when merged in order into a dictionary (a later member
    /// wins over an earlier one with its key), encoded exactly as `.object` of it is, without
    /// building the dictionary: for a line made from a few sources, such as a log line's metadata,
    /// request id and fields.
    public static func encodedObject(merging members: [(key: String, value: JSON)]) -> [UInt8] {
        var order = Array(members.indices)
        order.sort { members[$0].key < members[$1].key }  // stable: members sharing a key stay in order
        var buffer: [UInt8] = [0x7B]
        buffer.reserveCapacity(256)
        var written = 0
        for (position, index) in order.enumerated() {
            let (key, value) = members[index]
            if position + 1 < order.count && members[order[position + 1]].key == key { continue }  // a later one wins
            if written > 0 { buffer.append(0x2C) }
            appendString(key, to: &buffer)
            buffer.append(0x3A)
            value.write(to: &buffer)
            written += 1
        }
        buffer.append(0x7D)
        return buffer
    }

    /// Objects up to this many members are written without sorting their keys into an array.
    static let smallObjectCount = 8

    /// The members in key order, sorted as `sorted()` sorts the keys but in a buffer on the stack,
    /// with no second lookup per key (answers and envelopes are small objects).
    private static func appendSmallObjectMembers<Sink: ByteSink>(_ members: [String: JSON], to buffer: inout Sink) {
        withUnsafeTemporaryAllocation(of: Dictionary<String, JSON>.Index.self, capacity: members.count) { order in
            order.initialize(repeating: members.startIndex)
            defer { order.deinitialize() }
            var count = 0
            var index = members.startIndex
            while index != members.endIndex {
                // Insertion sort: a handful of keys.
                var slot = count
                while slot > 0 && members[index].key < members[order[slot - 1]].key {
                    order[slot] = order[slot - 1]
                    slot -= 1
                }
                order[slot] = index
                count += 1
                index = members.index(after: index)
            }
            for position in 0..<count {
                let (key, value) = members[order[position]]
                if position > 0 { buffer.append(0x2C) }
                appendString(key, to: &buffer)
                buffer.append(0x3A)
                value.write(to: &buffer)
            }
        }
    }

    static func appendInteger<Sink: ByteSink>(_ value: Int64, to buffer: inout Sink) {
        if value < 0 { buffer.append(0x2D) }
        buffer.append(decimal: value.magnitude)
    }

    static func appendDouble<Sink: ByteSink>(_ value: Double, to buffer: inout Sink) {
        guard value.isFinite else {
            buffer.append(literal: "null")
            return
        }
        // Swift's description is the shortest form that round-trips ("0.1", "1e+20", "5e-324",
        // "-0.0"), and for finite values it is always valid JSON.
        var text = value.description
        text.withUTF8 { buffer.append(bytes: $0) }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x61 + nibble - 10 }

    static func appendString<Sink: ByteSink>(_ value: String, to buffer: inout Sink) {
        buffer.append(0x22)
        appendStringContents(value, to: &buffer)
        buffer.append(0x22)
    }

    /// A string's characters, escaped, without the quotes.
    static func appendStringContents<Sink: ByteSink>(_ value: String, to buffer: inout Sink) {
        var copy = value
        copy.withUTF8 { utf8 in
            var runStart = 0
            var index = 0
            while true {
                index = PlainRun.end(in: utf8, from: index, stoppingAtNonASCII: false)
                guard index < utf8.count else { break }
                let byte = utf8[index]
                if runStart < index { buffer.append(bytes: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
                runStart = index + 1
                buffer.append(0x5C)
                switch byte {
                case 0x22: buffer.append(0x22)
                case 0x5C: buffer.append(0x5C)
                case 0x0A: buffer.append(0x6E)  // n
                case 0x0D: buffer.append(0x72)  // r
                case 0x09: buffer.append(0x74)  // t
                case 0x08: buffer.append(0x62)  // b
                case 0x0C: buffer.append(0x66)  // f
                default:
                    buffer.append(literal: "u00")
                    buffer.append(0x30 + (byte >> 4))
                    buffer.append(hexDigit(byte & 0x0F))
                }
                index += 1
            }
            if runStart < utf8.count { buffer.append(bytes: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        }
    }
}
