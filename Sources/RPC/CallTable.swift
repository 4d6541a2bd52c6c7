/// Values keyed by the numbers a connection gives its calls (1, 2, 3, ...). A key's low bits pick
/// its slot: numbers issued in sequence fall in distinct slots, so a call is found without hashing
/// (a `Dictionary` hashed each key with SipHash, twice per call, on every request of a hop).
/// Open addressing with linear probing, at most half full; a removal shifts the entries after it
/// back, so no deleted-entry marker ever lengthens a search. While every entry sits in its own
/// slot (the usual case: a slow call's key can share a slot with a newer one only once the
/// numbers have gone round the table) there is nothing to shift, and a removal is one slot
/// cleared. A key given by a peer is only ever looked up: it cannot place anything.
struct CallTable<Value>: Sequence {
    /// Marks an empty slot; never a key (a connection's numbers start at 1 and would take 2^63
    /// calls to wrap around to it).
    private static var vacant: Int { Int.min }

    private var keys: [Int] = []
    private var values: [Value?] = []
    /// `keys.count - 1` (a power of two minus one) once anything was stored.
    private var mask = -1
    private(set) var count = 0
    /// Entries not in the slot their key picks (pushed along by another).
    private var displaced = 0

    var isEmpty: Bool { count == 0 }

    subscript(key: Int) -> Value? {
        get { slot(of: key).map { values[$0]! } }
        set {
            if let newValue { insert(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    @discardableResult
    mutating func removeValue(forKey key: Int) -> Value? {
        guard var hole = slot(of: key) else { return nil }
        let removed = values[hole].take()
        keys[hole] = Self.vacant
        count -= 1
        if hole != key & mask { displaced -= 1 }
        // Every entry of the run after the hole that may not stay behind it moves into it.
        var index = hole
        while displaced > 0 {
            index = (index + 1) & mask
            let moving = keys[index]
            if moving == Self.vacant { break }
            let home = moving & mask
            // The entry may move back when the hole lies cyclically between its home and it.
            let holeIsOnItsWay = hole <= index ? (home <= hole || home > index) : (home <= hole && home > index)
            guard holeIsOnItsWay else { continue }
            keys[hole] = moving
            values[hole] = values[index].take()
            keys[index] = Self.vacant
            if hole == home { displaced -= 1 }
            hole = index
        }
        return removed
    }

    mutating func removeAll() { self = CallTable() }

    func makeIterator() -> some IteratorProtocol<(key: Int, value: Value)> {
        zip(keys, values).lazy.compactMap { key, value in value.map { (key: key, value: $0) } }.makeIterator()
    }

    private func slot(of key: Int) -> Int? {
        guard key != Self.vacant, count > 0 else { return nil }
        var index = key & mask
        if displaced == 0 { return keys[index] == key ? index : nil }
        while true {
            let held = keys[index]
            if held == key { return index }
            if held == Self.vacant { return nil }
            index = (index + 1) & mask
        }
    }

    private mutating func insert(_ value: Value, forKey key: Int) {
        precondition(key != Self.vacant, "a call table's key cannot be Int.min")
        if let existing = slot(of: key) {
            values[existing] = value
            return
        }
        if (count + 1) * 2 > keys.count { grow() }
        var index = key & mask
        while keys[index] != Self.vacant { index = (index + 1) & mask }
        if index != key & mask { displaced += 1 }
        keys[index] = key
        values[index] = value
        count += 1
    }

    private mutating func grow() {
        let old = self
        let capacity = Swift.max(8, keys.count * 2)
        keys = Array(repeating: Self.vacant, count: capacity)
        values = Array(repeating: nil, count: capacity)
        mask = capacity - 1
        count = 0
        displaced = 0
        for (key, value) in old { insert(value, forKey: key) }
    }
}
