import Foundation
import Platform
import Runtime
import TestSupport

/// Requests held until they are at least `minimumAgeMilliseconds` old, then answered from a loop timer.
public final class AnswerParking: @unchecked Sendable {
    private let lock = NSLock()
    private var parked: [(since: Int64, answer: () -> Void)] = []
    private var released = 0
    public let minimumAgeMilliseconds: Int64

    public init(minimumAgeMilliseconds: Int64) { self.minimumAgeMilliseconds = minimumAgeMilliseconds }

    public func park(_ answer: @escaping () -> Void) {
        lock.lock()
        parked.append((MonotonicClock.nowMilliseconds(), answer))
        lock.unlock()
    }

    /// Loop thread: answers every request old enough, inline (as a handler finishing on the loop would).
    public func releaseDue() {
        let now = MonotonicClock.nowMilliseconds()
        lock.lock()
        let due = parked.filter { now - $0.since >= minimumAgeMilliseconds }
        parked.removeAll { now - $0.since >= minimumAgeMilliseconds }
        released += due.count
        lock.unlock()
        for entry in due { entry.answer() }
    }

    public var releasedCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return released
    }
}

/// A server on its own loop thread whose parked answers are released by a 100 ms timer that
/// starts in the same millisecond as the server's connection tick and runs just before it.
public final class ParkedServerHarness: @unchecked Sendable {
    public let loop: EventLoop
    public let endpoint: Endpoint
    private let thread: Thread
    private let finished = DispatchSemaphore(value: 0)
    private let drain: Drain

    public typealias Drain = @Sendable (@escaping () -> Void) -> Void

    public init(parking: AnswerParking, start: @escaping @Sendable (EventLoop) throws -> (SocketAddress, Drain)) throws {
        let loop = try EventLoop()
        self.loop = loop
        let finished = self.finished
        thread = Thread {
            loop.run()
            finished.signal()
        }
        thread.start()
        let started = ResultBox<Result<(SocketAddress, Drain), Error>>()
        loop.execute {
            // Both timers must compute their first due time in one millisecond, so they stay in step.
            let millisecond = MonotonicClock.nowMilliseconds()
            while MonotonicClock.nowMilliseconds() == millisecond {}
            loop.scheduleRepeating(everyMilliseconds: 100) { parking.releaseDue() }
            started.set(Result { try start(loop) })
        }
        let (address, drain) = try started.wait().get()
        self.endpoint = Endpoint(host: "127.0.0.1", port: address.port)
        self.drain = drain
    }

    public func stop() {
        let loop = self.loop
        let drain = self.drain
        loop.execute { drain { loop.stop() } }
        finished.wait()
    }
}
