// The CBOR files use the standard library alone, so fuzz/run.sh compiles them on their own.

/// Writes a `CBOR` item in the core deterministic encoding (RFC 8949 §4.2.1: shortest
/// heads, definite lengths; map entries in the order given): what authenticators send.
public enum CBOREncoder {
    public static func encode(_ item: CBOR) -> [UInt8] {
        var out: [UInt8] = []
        append(item, to: &out)
        return out
    }

    private static func append(_ item: CBOR, to out: inout [UInt8]) {
        switch item {
        case .unsigned(let value): head(0, value, &out)
        case .negative(let value): head(1, UInt64(-1 - value), &out)
        case .bytes(let bytes):
            head(2, UInt64(bytes.count), &out)
            out += bytes
        case .text(let text):
            head(3, UInt64(text.utf8.count), &out)
            out += Array(text.utf8)
        case .array(let items):
            head(4, UInt64(items.count), &out)
            for item in items { append(item, to: &out) }
        case .map(let entries):
            head(5, UInt64(entries.count), &out)
            for entry in entries {
                append(entry.key, to: &out)
                append(entry.value, to: &out)
            }
        case .bool(let value): out.append(value ? 0xf5 : 0xf4)
        case .null: out.append(0xf6)
        }
    }

    /// The initial byte and argument of an item of major type `major`, alone.
    public static func head(_ major: UInt8, _ argument: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        head(major, argument, &out)
        return out
    }

    private static func head(_ major: UInt8, _ value: UInt64, _ out: inout [UInt8]) {
        let type = major << 5
        switch value {
        case 0..<24: out.append(type | UInt8(value))
        case 24...0xff: out += [type | 24, UInt8(value)]
        case 0x100...0xffff: out += [type | 25] + bigEndian(value, bytes: 2)
        case 0x1_0000...0xffff_ffff: out += [type | 26] + bigEndian(value, bytes: 4)
        default: out += [type | 27] + bigEndian(value, bytes: 8)
        }
    }

    public static func bigEndian(_ value: UInt64, bytes: Int) -> [UInt8] {
        (0..<bytes).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
}

extension CBOR {
    /// A map from its entries, in order: `CBOR.map(["fmt": .text("none")])`-like literals read badly.
    public static func map(_ entries: [(CBOR, CBOR)]) -> CBOR { .map(entries.map { CBORMapEntry(key: $0.0, value: $0.1) }) }

    /// An integer of either sign.
    public static func int(_ value: Int64) -> CBOR { value < 0 ? .negative(value) : .unsigned(UInt64(value)) }
}
