// The CBOR files use the standard library alone, so fuzz/run.sh compiles them on their own.

/// A CBOR (RFC 8949) data item of the kinds WebAuthn uses: no tags, floats or indefinite lengths.
public enum CBOR: Equatable, Sendable {
    case unsigned(UInt64)
    /// A negative integer (major type 1), held as its value: always below zero.
    case negative(Int64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    /// Entries in the order they were encoded; no two keys are equal.
    case map([CBORMapEntry])
    case bool(Bool)
    case null
}

public struct CBORMapEntry: Equatable, Sendable {
    public let key: CBOR
    public let value: CBOR

    public init(key: CBOR, value: CBOR) {
        self.key = key
        self.value = value
    }
}

extension CBOR {
    /// An integer item (either major type) as an Int64; nil for anything else or an unsigned
    /// value above Int64.max.
    public var integer: Int64? {
        switch self {
        case .unsigned(let value): return value <= UInt64(Int64.max) ? Int64(value) : nil
        case .negative(let value): return value
        default: return nil
        }
    }

    public var bytes: [UInt8]? {
        if case .bytes(let value) = self { return value }
        return nil
    }

    public var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    public var array: [CBOR]? {
        if case .array(let value) = self { return value }
        return nil
    }

    public var mapEntries: [CBORMapEntry]? {
        if case .map(let value) = self { return value }
        return nil
    }

    /// The value under the integer key `key` when this is a map (COSE labels).
    public subscript(key: Int64) -> CBOR? {
        mapEntries?.first { $0.key.integer == key }?.value
    }

    /// The value under the text key `key` when this is a map; keys are matched byte for byte.
    public subscript(key: String) -> CBOR? {
        mapEntries?.first { $0.key.text.map { $0.utf8.elementsEqual(key.utf8) } ?? false }?.value
    }
}
