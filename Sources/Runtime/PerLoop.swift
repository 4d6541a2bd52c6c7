import FoundationEssentials
import Platform

/// State that every request updates (metrics, summary counts), split into parts: each event
/// loop updates the part of its own number under that part's lock, which no other loop takes,
/// so loops neither wait on one another nor pass one cache line between cores per request.
/// Threads that are not loops (workers) share one more part. Readers visit the parts in turn,
/// so what they see is a sum, never a snapshot of one instant. Thread-safe.
public final class PerLoop<Value>: @unchecked Sendable {
    @usableFromInline
    final class Part {
        @usableFromInline let lock = Lock()
        // Only ever touched under `lock` (which cannot be taken twice): release builds skip
        // Swift's run-time exclusivity check on it, debug builds keep it.
        #if !DEBUG
        @exclusivity(unchecked)
        #endif
        @usableFromInline var value: Value
        init(_ value: Value) { self.value = value }
    }

    /// Loop parts first, then the one shared by other threads. More loops than parts share them.
    @usableFromInline let parts: [Part]

    public init(loopParts: Int = 16, _ initial: @autoclosure () -> Value) {
        precondition(loopParts > 0)
        parts = (0...loopParts).map { _ in Part(initial()) }
    }

    /// Updates the calling thread's part. Inlinable, so a caller in another module gets it
    /// specialised for its `Value` rather than looking up generic metadata on every request.
    @inlinable
    public func update<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        let part = parts[EventLoop.currentPart(of: parts.count - 1)]
        part.lock.lock()
        defer { part.lock.unlock() }
        return try body(&part.value)
    }

    /// Visits every part in turn, each under its lock; `body` may change it (to take and reset).
    public func visitAll(_ body: (inout Value) throws -> Void) rethrows {
        for part in parts {
            part.lock.lock()
            defer { part.lock.unlock() }
            try body(&part.value)
        }
    }
}

extension EventLoop {
    /// Which of `loopParts` parts the calling thread uses (`PerLoop`, `LoopLocal`): its loop's,
    /// or `loopParts` itself (the one after them) on a thread that runs no loop.
    @usableFromInline
    static func currentPart(of loopParts: Int) -> Int {
        currentNumber.map { $0 % loopParts } ?? loopParts
    }
}
