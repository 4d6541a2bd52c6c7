import Foundation

/// A list that any thread may append to, for outcomes of a burst; reads take a copy.
public final class SharedList<Element>: @unchecked Sendable {
    private let lock = NSLock()
    private var elements: [Element] = []

    public init() {}

    public func append(_ element: Element) {
        lock.lock()
        elements.append(element)
        lock.unlock()
    }

    public var all: [Element] {
        lock.lock()
        defer { lock.unlock() }
        return elements
    }

    public var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return elements.count
    }

    public var isEmpty: Bool { count == 0 }
}

extension Result {
    /// The error of a failed outcome, nil for a success.
    public var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
