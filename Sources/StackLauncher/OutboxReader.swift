import Dispatch
import FoundationEssentials
import Glibc
import LineProtocol
import Platform

/// Follows the outbox file and remembers the code each verification message carried, by
/// request id: how `latchkey bench` plays a user reading an SMS. Shared by all bench threads.
///
/// The bench shares the machine's cores with the stack it measures, so reading must cost next
/// to nothing: one follower thread sleeps in `poll` on an inotify watch of the file and reads
/// only what was appended since its last pass; a bench thread waiting for a code sleeps until
/// the follower has seen that code, and only its own code wakes it (no polling of the file by
/// every thread, no wake-up of every waiting thread for each message). A code is forgotten
/// once taken, so the cost per code stays flat however long the run.
public final class OutboxReader: @unchecked Sendable {
    /// How often the follower looks at `stopping` while no message comes.
    private static let stopCheckMilliseconds: Int32 = 100

    private let path: String
    private let lock = Lock()
    // Guarded by `lock`.
    private var codes: [String: String] = [:]
    /// The bench threads waiting for a code, by request id.
    private var waiters: [String: DispatchSemaphore] = [:]
    private var stopping = false
    private var failure: String?
    // The follower's own.
    private var descriptor: Int32 = -1
    private var partial: [UInt8] = []
    private var follower: JoinableThread?

    /// Creates the file when the stack has not yet (so it can be watched) and starts following it.
    public init(path: String) throws {
        self.path = path
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw OutboxError(message: "cannot open the outbox \(path) (errno \(errno))") }
        close(fd)
        let watch = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard watch >= 0 else { throw OutboxError(message: "inotify_init1 failed (errno \(errno))") }
        guard inotify_add_watch(watch, path, UInt32(IN_MODIFY)) >= 0 else {
            close(watch)
            throw OutboxError(message: "cannot watch the outbox (errno \(errno))")
        }
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        // Only what is appended from now on: every code a bench waits for is sent after its reader
        // starts, and an earlier row's messages on the same stack are nobody's.
        if descriptor >= 0 { lseek(descriptor, 0, SEEK_END) }
        follower = JoinableThread(name: "outbox-reader") { [self] in follow(watch: watch) }
    }

    /// Stops the follower and joins it. Call once, after the last `code(for:)`.
    public func stop() {
        lock.lock()
        stopping = true
        lock.unlock()
        follower?.join()
        follower = nil
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }

    /// The code sent for `requestID`, waiting for the message up to `timeoutSeconds`.
    public func code(for requestID: String, timeoutSeconds: Double = 5) throws -> String {
        lock.lock()
        if let code = codes.removeValue(forKey: requestID) {
            lock.unlock()
            return code
        }
        if let failure {
            lock.unlock()
            throw OutboxError(message: failure)
        }
        let arrived = DispatchSemaphore(value: 0)
        waiters[requestID] = arrived
        lock.unlock()
        _ = arrived.wait(timeout: .now() + timeoutSeconds)
        lock.lock()
        defer { lock.unlock() }
        waiters[requestID] = nil
        if let code = codes.removeValue(forKey: requestID) { return code }
        throw OutboxError(message: failure ?? "no message for \(requestID) in the outbox")
    }

    /// The follower: a pass over what was appended, then sleep until the file changes again.
    /// The first pass runs before the first sleep, so nothing appended since the reader started is missed.
    private func follow(watch: Int32) {
        defer { close(watch) }
        var events = [UInt8](repeating: 0, count: 4096)
        while true {
            readNewLines()
            lock.lock()
            let stop = stopping
            lock.unlock()
            if stop { return }
            var descriptor = pollfd(fd: watch, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Self.stopCheckMilliseconds)
            if ready > 0 {
                // Drain the events; which ones came does not matter, only that the file grew.
                while events.withUnsafeMutableBytes({ read(watch, $0.baseAddress, $0.count) }) > 0 {}
            } else if ready < 0 && errno != EINTR {
                fail("poll on the outbox watch failed (errno \(errno))")
                return
            }
        }
    }

    private func readNewLines() {
        guard descriptor >= 0 else { return }
        // All that was appended: a burst larger than one read must not wait for the next message.
        let appended = LibC.readToEnd(descriptor)
        guard !appended.isEmpty else { return }
        partial += appended
        var found: [(String, String)] = []
        var start = 0
        while let newline = partial[start...].firstIndex(of: UInt8(ascii: "\n")) {
            let line = partial[start..<newline]
            start = newline + 1
            guard let message = try? JSONParser.parse(Array(line)), let text = message["text"]?.stringValue,
                let requestID = message["request_id"]?.stringValue, let code = Self.firstCode(in: text)
            else { continue }
            found.append((requestID, code))
        }
        partial.removeFirst(start)
        guard !found.isEmpty else { return }
        lock.lock()
        for (requestID, code) in found {
            codes[requestID] = code
            waiters[requestID]?.signal()
        }
        lock.unlock()
    }

    private func fail(_ message: String) {
        lock.lock()
        failure = message
        for waiter in waiters.values { waiter.signal() }
        lock.unlock()
    }

    /// The first run of 4 to 10 digits: the code (amounts like "50.00" come after it).
    static func firstCode(in text: String) -> String? {
        var run = ""
        for character in text {
            if character.isASCII && character.isNumber {
                run.append(character)
            } else {
                if (4...10).contains(run.count) { return run }
                run = ""
            }
        }
        return (4...10).contains(run.count) ? run : nil
    }
}

/// A bench step that did not go as the flow says (no code came, an answer lacked a member).
public struct OutboxError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }

    public init(message: String) { self.message = message }
}
