/// An immutable value built once for each event loop, and once more for threads that are not
/// loops. What a request takes out of it (a reference, a dictionary) is its own loop's copy, so
/// the reference count it bumps lives on one core: a value shared by every loop would pass its
/// count's cache line between cores on every request. More loops than parts share them.
public final class LoopLocal<Value: Sendable>: Sendable {
    /// Loop parts first, then the one for other threads.
    @usableFromInline let values: [Value]

    public convenience init(loopParts: Int = 16, _ make: () -> Value) {
        self.init(loopParts: loopParts) { _ in make() }
    }

    /// Each copy built knowing whose it is: `make(part)` is the copy of the loops whose `number`
    /// modulo `loopParts` is `part`, and `make(loopParts)` the other threads'.
    public init(loopParts: Int = 16, part make: (Int) -> Value) {
        precondition(loopParts > 0)
        values = (0...loopParts).map(make)
    }

    /// The calling thread's copy. Inlinable, so a caller in another module reads it specialised
    /// for its `Value`, not through the generic array subscript.
    @inlinable
    public var current: Value { values[EventLoop.currentPart(of: values.count - 1)] }
}
