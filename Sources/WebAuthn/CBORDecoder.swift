/// Bounds on what the decoder accepts from untrusted input; each one is a `CBORError`.
public struct CBORLimits: Sendable, Equatable {
    /// Deepest nesting of arrays and maps (`[[1]]` has depth 2).
    public var maxDepth: Int
    /// Most elements in one array, or entries in one map.
    public var maxItems: Int
    /// Longest byte or text string, in bytes.
    public var maxStringBytes: Int
    /// Longest input, in bytes.
    public var maxInputBytes: Int

    public init(maxDepth: Int = 16, maxItems: Int = 256, maxStringBytes: Int = 16 * 1024, maxInputBytes: Int = 64 * 1024) {
        precondition(maxDepth >= 0 && maxItems >= 0 && maxStringBytes >= 0 && maxInputBytes >= 0, "CBOR limits must not be negative")
        self.maxDepth = maxDepth
        self.maxItems = maxItems
        self.maxStringBytes = maxStringBytes
        self.maxInputBytes = maxInputBytes
    }

    public static let `default` = CBORLimits()
}

/// A strict RFC 8949 decoder for definite-length items: integers (to 64 bits), byte and text
/// strings, arrays, maps keyed by integers or text, false, true and null. Non-preferred
/// (longer than needed) argument encodings are accepted; map keys are compared by value.
public enum CBORDecoder {
    /// Exactly one item, with no bytes after it.
    public static func decode(_ bytes: [UInt8], limits: CBORLimits = .default) throws(CBORError) -> CBOR {
        try decode(bytes[...], limits: limits)
    }

    /// Exactly one item, with no bytes after it. Error offsets count from the slice's start.
    public static func decode(_ bytes: ArraySlice<UInt8>, limits: CBORLimits = .default) throws(CBORError) -> CBOR {
        let (value, byteCount) = try decodePrefix(bytes, limits: limits)
        guard byteCount == bytes.count else { throw CBORError(.trailingBytes, at: byteCount) }
        return value
    }

    /// The item at the start of `bytes` and how many bytes it took, for an item followed by
    /// other data (the COSE key in authenticator data).
    public static func decodePrefix(_ bytes: ArraySlice<UInt8>, limits: CBORLimits = .default) throws(CBORError) -> (value: CBOR, byteCount: Int) {
        guard bytes.count <= limits.maxInputBytes else { throw CBORError(.inputTooLong, at: limits.maxInputBytes) }
        var reader = CBORReader(bytes: bytes, limits: limits)
        let value = try reader.item(depth: 0)
        return (value, reader.position)
    }
}

/// Map keys by value, with text compared byte for byte (`String` equality is canonical
/// equivalence, which would call two differently encoded keys the same).
private enum MapKey: Hashable {
    case unsigned(UInt64)
    case negative(Int64)
    case text([UInt8])
}

private struct CBORReader {
    let bytes: ArraySlice<UInt8>
    let limits: CBORLimits
    /// From the slice's start.
    var position = 0

    init(bytes: ArraySlice<UInt8>, limits: CBORLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    var remaining: Int { bytes.count - position }

    mutating func item(depth: Int) throws(CBORError) -> CBOR {
        let start = position
        guard position < bytes.count else { throw CBORError(.truncated, at: bytes.count) }
        let initial = bytes[bytes.startIndex + position]
        position += 1
        let major = initial >> 5, info = initial & 0x1f
        switch major {
        case 6: throw CBORError(.tag, at: start)
        case 7: return try simpleValue(info, at: start)
        default: break
        }
        let argument = try self.argument(info, major: major, at: start)
        switch major {
        case 0:
            return .unsigned(argument)
        case 1:
            guard argument <= UInt64(Int64.max) else { throw CBORError(.negativeOutOfRange, at: start) }
            return .negative(-1 - Int64(argument))
        case 2:
            return .bytes(Array(try string(length: argument, at: start)))
        case 3:
            guard let text = String(validating: try string(length: argument, at: start), as: UTF8.self) else {
                throw CBORError(.invalidUTF8, at: start)
            }
            return .text(text)
        case 4:
            let count = try containerCount(argument, depth: depth, at: start)
            var elements: [CBOR] = []
            elements.reserveCapacity(min(count, remaining))
            for _ in 0..<count { elements.append(try item(depth: depth + 1)) }
            return .array(elements)
        default:
            let count = try containerCount(argument, depth: depth, at: start)
            var entries: [CBORMapEntry] = []
            entries.reserveCapacity(min(count, remaining / 2))
            var seen: Set<MapKey> = []
            for _ in 0..<count {
                let keyStart = position
                let key = try item(depth: depth + 1)
                guard let identity = Self.mapKey(key) else { throw CBORError(.invalidMapKey, at: keyStart) }
                guard seen.insert(identity).inserted else { throw CBORError(.duplicateMapKey, at: keyStart) }
                entries.append(CBORMapEntry(key: key, value: try item(depth: depth + 1)))
            }
            return .map(entries)
        }
    }

    private func simpleValue(_ info: UInt8, at start: Int) throws(CBORError) -> CBOR {
        switch info {
        case 20: return .bool(false)
        case 21: return .bool(true)
        case 22: return .null
        case 25, 26, 27: throw CBORError(.float, at: start)
        case 28, 29, 30: throw CBORError(.reservedAdditionalInfo, at: start)
        case 31: throw CBORError(.indefiniteLength, at: start)  // a "break" outside any indefinite item
        default: throw CBORError(.unsupportedSimpleValue, at: start)
        }
    }

    private mutating func argument(_ info: UInt8, major: UInt8, at start: Int) throws(CBORError) -> UInt64 {
        switch info {
        case 0..<24: return UInt64(info)
        case 24, 25, 26, 27:
            return try take(1 << Int(info - 24), at: start).reduce(0) { $0 << 8 | UInt64($1) }
        case 31: throw CBORError(major <= 1 ? .reservedAdditionalInfo : .indefiniteLength, at: start)
        default: throw CBORError(.reservedAdditionalInfo, at: start)
        }
    }

    private mutating func string(length: UInt64, at start: Int) throws(CBORError) -> ArraySlice<UInt8> {
        guard length <= UInt64(limits.maxStringBytes) else { throw CBORError(.stringTooLong, at: start) }
        return try take(Int(length), at: start)
    }

    private func containerCount(_ count: UInt64, depth: Int, at start: Int) throws(CBORError) -> Int {
        guard depth < limits.maxDepth else { throw CBORError(.tooDeep, at: start) }
        guard count <= UInt64(limits.maxItems) else { throw CBORError(.tooManyItems, at: start) }
        return Int(count)
    }

    /// The next `count` bytes; `truncated` (at the end of the input) when there are fewer.
    private mutating func take(_ count: Int, at start: Int) throws(CBORError) -> ArraySlice<UInt8> {
        guard count <= remaining else { throw CBORError(.truncated, at: bytes.count) }
        let from = bytes.startIndex + position
        position += count
        return bytes[from..<from + count]
    }

    private static func mapKey(_ key: CBOR) -> MapKey? {
        switch key {
        case .unsigned(let value): return .unsigned(value)
        case .negative(let value): return .negative(value)
        case .text(let value): return .text(Array(value.utf8))
        default: return nil
        }
    }
}
