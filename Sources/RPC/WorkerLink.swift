import Foundation
import LineProtocol
import Platform

/// One connection to a replica that a worker thread uses alone while its call lasts: it writes
/// the request itself and sleeps in `poll` until the answer arrives. Next to going through the
/// event loop (hand the call to the loop, the loop writes, reads, wakes the worker), that is one
/// thread wake-up per call instead of three. One call at a time; never shared between threads.
final class WorkerLink {
    /// How one call on the link ended, short of an answer.
    enum Failure: Error {
        case connectFailed
        /// The connection ended or failed after (part of) the request was written.
        case lost
        case timedOut
        case malformedAnswer
    }

    let address: SocketAddress
    private let socket: Socket
    private var framer = LineFramer(maxLineBytes: 16 << 20)
    private var readBuffer = [UInt8](repeating: 0, count: 16 * 1024)
    private var nextCallID: Int64 = 0
    private(set) var lastUsedMilliseconds: Int64
    /// False once a call failed on it: the connection may still carry that call's answer.
    private(set) var isReusable = true

    private init(address: SocketAddress, socket: Socket) {
        self.address = address
        self.socket = socket
        lastUsedMilliseconds = MonotonicClock.nowMilliseconds()
    }

    deinit { socket.close() }

    static func connect(to address: SocketAddress, deadlineMilliseconds: Int64) throws(Failure) -> WorkerLink {
        let socket: Socket
        do { socket = try Socket.connect(to: address) } catch { throw .connectFailed }
        let link = WorkerLink(address: address, socket: socket)
        guard link.wait(for: Int16(POLLOUT), until: deadlineMilliseconds), socket.pendingError() == 0 else { throw .connectFailed }
        return link
    }

    /// True when the link sat idle with nothing to read: a peer that closed it (a restart, its
    /// idle timer) has left an end of input to read, and a request written there would be lost.
    var isQuiet: Bool {
        var poller = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
        return LibC.poll(&poller, 1, 0) == 0
    }

    /// Writes `request` (its `id` replaced by this link's next number) and waits for its answer.
    func call(_ request: RPCRequest, deadlineMilliseconds: Int64) throws(Failure) -> RPCResponse {
        nextCallID &+= 1
        let callID = nextCallID
        var line: [UInt8] = []
        line.reserveCapacity(256)
        RPCRequest(method: request.method, params: request.params, id: .int(callID), meta: request.meta).append(to: &line)
        line.append(UInt8(ascii: "\n"))
        isReusable = false
        try write(line, until: deadlineMilliseconds)
        let response = try readAnswer(to: callID, until: deadlineMilliseconds)
        isReusable = true
        lastUsedMilliseconds = MonotonicClock.nowMilliseconds()
        return response
    }

    private func write(_ line: [UInt8], until deadline: Int64) throws(Failure) {
        var offset = 0
        while offset < line.count {
            let result: IOResult<Int>
            do { result = try line.withUnsafeBytes { bytes throws(SystemError) in try socket.write(UnsafeRawBufferPointer(rebasing: bytes[offset...])) } } catch {
                throw .lost
            }
            switch result {
            case .done(let count): offset += count
            case .wouldBlock: guard wait(for: Int16(POLLOUT), until: deadline) else { throw .timedOut }
            }
        }
    }

    /// Answers to other ids are late ones to calls that gave up (never on a link reused after a
    /// failure, but harmless): skipped, like the event loop's client does.
    private func readAnswer(to callID: Int64, until deadline: Int64) throws(Failure) -> RPCResponse {
        while true {
            while let framed = framer.next() {
                guard case .line(let line) = framed else { throw .malformedAnswer }
                if line.isEmpty { continue }
                guard let response = RPCResponse.decode(line: line, limits: Self.answerLimits) else { throw .malformedAnswer }
                if response.id.intValue == callID { return response }
            }
            guard wait(for: Int16(POLLIN), until: deadline) else { throw .timedOut }
            let result: IOResult<Int>
            do { result = try readBuffer.withUnsafeMutableBytes { bytes throws(SystemError) in try socket.read(into: bytes) } } catch {
                throw .lost
            }
            switch result {
            case .done(0): throw .lost
            case .done(let count): framer.append(readBuffer[..<count])
            case .wouldBlock: continue
            }
        }
    }

    private static let answerLimits = JSONLimits(maxDepth: 64, maxBytes: 16 << 20)

    /// Sleeps until the socket is ready for `events` (or has failed: the next system call says
    /// how); false when the deadline passes first.
    private func wait(for events: Int16, until deadline: Int64) -> Bool {
        var poller = pollfd(fd: socket.fd, events: events, revents: 0)
        while true {
            let remaining = deadline - MonotonicClock.nowMilliseconds()
            if remaining <= 0 { return false }
            let ready = LibC.poll(&poller, 1, Int32(clamping: remaining))
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return true }
        }
    }
}

/// The idle `WorkerLink`s of one client, by address: a worker takes one for a call and gives it
/// back after. Thread-safe.
final class WorkerLinks: @unchecked Sendable {
    /// Links kept idle per address; more (a burst wider than that) are closed after their call.
    private let maxIdlePerAddress: Int
    /// Younger than the replica's idle timeout (five minutes), so it never closes one under a call.
    private static let maxIdleMilliseconds: Int64 = 60_000
    private let lock = NSLock()
    private var idle: [SocketAddress: [WorkerLink]] = [:]

    init(maxIdlePerAddress: Int) { self.maxIdlePerAddress = maxIdlePerAddress }

    /// The most recently used idle link to `address` that is still open and fresh, if any. Stale
    /// ones found on the way are closed (outside the lock).
    func take(_ address: SocketAddress) -> WorkerLink? {
        let oldest = MonotonicClock.nowMilliseconds() - Self.maxIdleMilliseconds
        var stale: [WorkerLink] = []
        defer { stale.removeAll() }
        while true {
            lock.lock()
            let link = idle[address]?.popLast()
            lock.unlock()
            guard let link else { return nil }
            if link.lastUsedMilliseconds >= oldest && link.isQuiet { return link }
            stale.append(link)
        }
    }

    func giveBack(_ link: WorkerLink) {
        guard link.isReusable else { return }
        lock.lock()
        let kept = idle[link.address, default: []].count < maxIdlePerAddress
        if kept { idle[link.address, default: []].append(link) }
        lock.unlock()
    }

    /// Closes the idle links to addresses no longer in use.
    func forget(allBut addresses: [SocketAddress]) {
        lock.lock()
        let dropped = idle.filter { !addresses.contains($0.key) }
        for address in dropped.keys { idle.removeValue(forKey: address) }
        lock.unlock()
        _ = dropped
    }
}
