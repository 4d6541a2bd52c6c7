import Foundation

/// One value handed from another thread (a loop, a worker, a callback) to the waiting test.
public final class ResultBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private let filled = DispatchSemaphore(value: 0)
    private var stored: Value?

    public init() {}

    /// Keeps the first value; later ones are ignored, so a double callback cannot hide.
    public func set(_ value: Value) {
        lock.lock()
        let first = stored == nil
        if first { stored = value }
        lock.unlock()
        if first { filled.signal() }
    }

    /// The value if one was set yet.
    public var value: Value? {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    /// Waits for the value. A test that never gets one stops here with a message instead of
    /// hanging the whole run.
    public func wait(timeoutSeconds: Double = 60) -> Value {
        guard filled.wait(timeout: .now() + timeoutSeconds) == .success else {
            fatalError("no value arrived within \(timeoutSeconds) s")
        }
        filled.signal()  // later waits return at once
        return value!
    }
}
