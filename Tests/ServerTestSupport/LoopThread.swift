import Foundation
import Runtime
import TestSupport

/// An event loop running on a thread of its own, for servers and clients a test starts in-process.
public final class LoopThread: @unchecked Sendable {
    public let loop: EventLoop
    private let done = DispatchSemaphore(value: 0)
    private var stopped = false

    public init() throws {
        loop = try EventLoop()
        let thread = Thread { [loop, done] in
            loop.run()
            done.signal()
        }
        thread.start()
        // Wait until the loop runs (and knows its thread) before anyone asks `isInLoopThread`.
        _ = try sync { true }
        KeptAlive.shared.keep(self)
    }

    /// Stops the loop and waits for its thread. The loop and what is registered on it stay
    /// referenced until the process exits (loops keep their handlers and timers by design).
    public func shutdown() {
        guard !stopped else { return }
        stopped = true
        loop.stop()
        done.wait()
    }

    /// Runs `drain` on the loop, waits until it calls its completion, then stops the loop like
    /// `shutdown`. Once only: after a stop the loop would never run the drain.
    public func drainAndShutdown(_ drain: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        guard !stopped else { return }
        self.await(drain)
        shutdown()
    }

    /// Runs `body` on the loop thread and waits for it.
    public func sync<T>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        let box = ResultBox<Result<T, Error>>()
        loop.execute { box.set(Result { try body() }) }
        return try box.wait().get()
    }

    /// Runs `body` on the loop thread, handing it a completion to call (now or later), and waits for that.
    public func await(_ body: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        let finished = DispatchSemaphore(value: 0)
        loop.execute { body { finished.signal() } }
        finished.wait()
    }
}
