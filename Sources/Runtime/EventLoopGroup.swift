import FoundationEssentials
import Platform

/// The event loops of one process (`--event-loops N`). Loop 0, `main`, runs on the thread that
/// serves (`ServiceHost.serve`) and carries the listening sockets, the timers and the internal
/// clients; accepted connections are handed out round-robin over all of them (`nextLoop`), so a
/// process uses as many cores as it has loops. The worker pool is shared and unchanged.
/// Each connection stays on one loop for its life, so its writes keep their order.
public final class EventLoopGroup: @unchecked Sendable {
    public let loops: [EventLoop]
    public var main: EventLoop { loops[0] }

    private let lock = Lock()
    private var nextIndex = 0  // guarded by lock
    private var threads: [JoinableThread] = []  // touched by the serving thread only

    /// Most loops a process may ask for: more than the cores only adds context switches.
    public static let maxLoops = 256

    /// `count` new loops on `backend`.
    public init(count: Int, backend: EventBackendKind = .processDefault) throws(SystemError) {
        precondition((1...Self.maxLoops).contains(count), "event loop count \(count) out of range")
        var loops: [EventLoop] = []
        for _ in 0..<count { loops.append(try EventLoop(backend: backend)) }
        self.loops = loops
    }

    /// A group of one loop that the caller already runs (tests, tools).
    public init(loop: EventLoop) {
        loops = [loop]
    }

    /// The process default: `LATCHKEY_EVENT_LOOPS` when set (so CI runs a suite with one loop),
    /// else the number of cores this process may run on.
    public static var defaultCount: Int {
        if let text = ProcessInfo.processInfo.environment["LATCHKEY_EVENT_LOOPS"], let count = Int(text), (1...maxLoops).contains(count) {
            return count
        }
        return max(1, min(maxLoops, ProcessInfo.processInfo.activeProcessorCount))
    }

    /// The loop for the next accepted connection (round-robin). Safe from any thread.
    public func nextLoop() -> EventLoop {
        guard loops.count > 1 else { return loops[0] }
        lock.lock()
        let index = nextIndex
        nextIndex = (nextIndex + 1) % loops.count
        lock.unlock()
        return loops[index]
    }

    /// Starts every loop but `main` on a thread of its own. `main` is run by the caller.
    public func startSecondaryLoops() {
        precondition(threads.isEmpty, "secondary loops started twice")
        for (index, loop) in loops.enumerated().dropFirst() {
            threads.append(JoinableThread(name: "event-loop-\(index)") { loop.run() })
        }
    }

    /// Stops every loop but `main` and joins their threads (once their connections are drained).
    public func stopSecondaryLoops() {
        for loop in loops.dropFirst() { loop.stop() }
        for thread in threads { thread.join() }
        threads.removeAll()
    }
}
