import Platform

/// Method names to what serves them: filled at start-up, read by every request. A name is
/// found by FNV-1a over its bytes and compared byte for byte, where a `Dictionary<String, _>`
/// hashed it with the process's seeded SipHash (about 350 instructions a lookup, more in a
/// process whose seed made two names share a bucket). Only names put in at start-up are stored,
/// so a caller's made-up name only probes: it cannot lengthen anyone's search.
/// Inlinable, so the gateway's table is specialized for its routes like the services' are.
public struct MethodTable<Value> {
    /// Immutable, behind one reference: a table read out of a class property is copied with one
    /// retain, not one per array. `insert` (start-up only) builds the next one.
    @usableFromInline
    final class Storage {
        /// Every name's UTF-8, one after another; `spans[i]` is where name `i` lies in it.
        @usableFromInline let bytes: [UInt8]
        @usableFromInline let spans: [Range<Int>]
        @usableFromInline let values: [Value]
        let names: [String]
        /// Open addressing with linear probing, at most half full: an index into `values`, or -1.
        @usableFromInline let slots: [Int]

        init(bytes: [UInt8], spans: [Range<Int>], values: [Value], names: [String]) {
            self.bytes = bytes
            self.spans = spans
            self.values = values
            self.names = names
            var slots = [Int](repeating: -1, count: max(16, (values.count * 2).nextPowerOfTwo))
            let mask = slots.count - 1
            bytes.withUnsafeBufferPointer { bytes in
                for (index, span) in spans.enumerated() {
                    var slot = FNV1a.hash(UnsafeBufferPointer(rebasing: bytes[span])) & mask
                    while slots[slot] >= 0 { slot = (slot + 1) & mask }
                    slots[slot] = index
                }
            }
            self.slots = slots
        }

        /// The index of `name` in `values`, or nil.
        @inlinable
        func index(of name: UnsafeBufferPointer<UInt8>) -> Int? {
            let mask = slots.count - 1
            var slot = FNV1a.hash(name) & mask
            return bytes.withUnsafeBufferPointer { stored in
                while true {
                    let index = slots[slot]
                    if index < 0 { return nil }
                    let span = spans[index]
                    if span.count == name.count, span.isEmpty || memcmp(stored.baseAddress! + span.lowerBound, name.baseAddress!, span.count) == 0 {
                        return index
                    }
                    slot = (slot + 1) & mask
                }
            }
        }
    }

    @usableFromInline var storage = Storage(bytes: [], spans: [], values: [], names: [])

    public init() {}

    public var names: [String] { storage.names }

    @inlinable
    public func value(for name: String) -> Value? {
        var name = name
        let storage = self.storage
        return name.withUTF8 { storage.index(of: $0) }.map { storage.values[$0] }
    }

    @inlinable
    public func contains(_ name: String) -> Bool { value(for: name) != nil }

    /// Adds `name`, which must not be in the table yet.
    public mutating func insert(_ value: Value, for name: String) {
        precondition(!contains(name), "\(name) is in the table already")
        let old = storage
        let utf8 = Array(name.utf8)
        storage = Storage(
            bytes: old.bytes + utf8, spans: old.spans + [old.bytes.count..<old.bytes.count + utf8.count], values: old.values + [value],
            names: old.names + [name])
    }
}

// Its storage is immutable once built.
extension MethodTable: @unchecked Sendable where Value: Sendable {}
