import Foundation

/// Objects that live until the test process exits. Event loops keep their handlers and timers
/// for good (by design), so a stopped loop and what it served stay reachable: not a leak.
public final class KeptAlive: @unchecked Sendable {
    public static let shared = KeptAlive()
    private let lock = NSLock()
    private var objects: [AnyObject] = []

    public func keep(_ object: AnyObject) {
        lock.lock()
        objects.append(object)
        lock.unlock()
    }
}
