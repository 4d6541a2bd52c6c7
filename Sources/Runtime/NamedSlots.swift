import Foundation

/// Names numbered in the order they are first asked for, the same number for the same name:
/// what a figure recorded on every request is kept under, so recording it indexes an array
/// instead of hashing a name. Asked once per name (when a route is built); thread-safe.
public final class NamedSlots: @unchecked Sendable {
    private let lock = NSLock()
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
