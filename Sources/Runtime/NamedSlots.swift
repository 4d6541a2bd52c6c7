import FoundationEssentials
import Platform

/// Names numbered in the order they are first asked for, the same number for the same name:
/// what a figure recorded on every request is kept under, so recording it indexes an array
/// instead of hashing a name. Asked once per name (when a route is built); thread-safe.
public final class NamedSlots: @unchecked Sendable {
    private let lock = Lock()
    private var names: [String] = []
    private var numbers: [String: Int] = [:]

    public init() {}

    public func number(for name: String) -> Int {
        lock.lock()
        defer { lock.unlock() }
        if let number = numbers[name] { return number }
        names.append(name)
        numbers[name] = names.count - 1
        return names.count - 1
    }

    /// Every name so far, by number.
    public var allNames: [String] {
        lock.lock()
        defer { lock.unlock() }
        return names
    }
}

extension Array {
    /// Grows the array with `filler` until `index` is inside it: figures kept by slot number
    /// gain a place the first time a slot is counted.
    @inlinable
    public mutating func extend(toInclude index: Int, with filler: @autoclosure () -> Element) {
        if count <= index { append(contentsOf: repeatElement(filler(), count: index + 1 - count)) }
    }
}
