import Platform

/// A result's column names and where each one is, shared by every row of the result. Stores
/// read rows by name for every column they decode (60 reads in a verification start + check),
/// so a name is found by FNV-1a over its few bytes and one comparison of two strings, which for
/// the same short name is a comparison of two words; a `[String: Int]` ran the process's seeded
/// SipHash for each (about 380 instructions a read). Only names of the result are stored, so a
/// name asked for that is not one of them only probes. The first of duplicate names wins.
final class ColumnIndex: Sendable {
    /// In result order, duplicates included.
    let names: [String]
    /// Open addressing with linear probing, at most half full: a position in `names`, or -1.
    private let slots: [Int]

    init(names: [String]) {
        self.names = names
        var slots = [Int](repeating: -1, count: max(8, (names.count * 2).nextPowerOfTwo))
        let mask = slots.count - 1
        for (position, name) in names.enumerated() {
            var slot = Self.hash(name) & mask
            var duplicate = false
            while slots[slot] >= 0 {
                if names[slots[slot]] == name {
                    duplicate = true
                    break
                }
                slot = (slot + 1) & mask
            }
            if !duplicate { slots[slot] = position }
        }
        self.slots = slots
    }

    /// Where `name` is in a row, or nil when the result has no such column.
    func position(of name: String) -> Int? {
        let mask = slots.count - 1
        var slot = Self.hash(name) & mask
        while true {
            let position = slots[slot]
            if position < 0 { return nil }
            if names[position] == name { return position }
            slot = (slot + 1) & mask
        }
    }

    /// The names once each, in result order.
    var uniqueNames: [String] {
        names.enumerated().filter { position(of: $0.element) == $0.offset }.map(\.element)
    }

    private static func hash(_ name: String) -> Int {
        // Over the contiguous bytes: walking `utf8` element by element cost ten times as much.
        var name = name
        return name.withUTF8 { FNV1a.hash($0) }
    }
}
