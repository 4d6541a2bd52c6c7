import Platform

/// What a channel tells the protocol above it. Called on the loop thread.
public protocol ChannelDelegate: AnyObject {
    /// Bytes arrived. The buffer is only valid during the call.
    func channel(_ channel: Channel, didRead bytes: UnsafeRawBufferPointer)
    /// The output buffer drained below the low-water mark after having been above it.
    func channelDidDrain(_ channel: Channel)
    /// The peer finished sending (it may still read). Reading has stopped; the delegate
    /// decides when to close, typically once every answer it owes is written.
    func channelDidReadEndOfInput(_ channel: Channel)
    /// The channel closed (peer hang-up, error, or `close()`); called exactly once.
    func channelDidClose(_ channel: Channel)
}

/// A connected socket on the loop: reads into the delegate, buffers writes the kernel
/// could not take yet, and lets the protocol pause reading for back-pressure.
/// Confined to its loop's thread.
public final class Channel: EventHandler, @unchecked Sendable {
    public let loop: EventLoop
    public let socket: Socket
    public let peer: SocketAddress?
    /// Held strongly while the channel is open, and let go once told of the close: the delegate
    /// owns the channel in turn, and a weak reference here would give every connection a side
    /// table, slowing each retain and release of it on every request. An owner that lets its
    /// channel go must close it.
    public var delegate: ChannelDelegate?
    public let transport: Transport

    public enum State { case open, closing, closed }
    public var state: State { currentState }
    /// Reading stopped by `pauseReading` (back-pressure).
    public var readingPaused: Bool { paused }
    public var endOfInput: Bool { inputEnded }

    // The plain values below are touched on every request: skipping Swift's run-time exclusivity
    // check on them costs no memory safety. Other modules read them through the getters above:
    // a direct read of a stored property from another module is checked all the same.
    @exclusivity(unchecked) private var currentState: State = .open
    @exclusivity(unchecked) private var paused = false
    @exclusivity(unchecked) private var inputEnded = false
    @exclusivity(unchecked) private var outboundOffset = 0
    @exclusivity(unchecked) private var wasAboveHighWater = false
    @exclusivity(unchecked) private var flushScheduledThisIteration = false

    // Touched several times per answer, always on the loop thread and never across a call that
    // could reach it again (`write` lends it out of the property): release builds skip Swift's
    // run-time exclusivity check on it; debug builds, which run the tests, keep it. The same
    // holds for the few properties of the hop marked this way.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private var outbound: [UInt8] = []
    /// Start of the current write stall, for the slow-reader cut-off: when the output now waiting
    /// became pending, or when the kernel last took some of it; nil when nothing waits. Never
    /// the last write of an earlier exchange, or an idle connection's next answer would look stalled.
    public private(set) var writeStalledSinceMilliseconds: Int64?
    public private(set) var lastReadMilliseconds = MonotonicClock.nowMilliseconds()

    public let highWaterBytes: Int

    public init(loop: EventLoop, socket: Socket, peer: SocketAddress?, transport: Transport? = nil, highWaterBytes: Int = 1 << 20) {
        self.loop = loop
        self.socket = socket
        self.peer = peer
        self.transport = transport ?? PlainTransport(socket: socket)
        self.highWaterBytes = highWaterBytes
    }

    /// Starts delivering events. Call once, on the loop thread, after setting the delegate.
    public func activate() throws(SystemError) {
        try loop.register(socket.fd, readable: true, writable: transport.wantsWritable, handler: self)
        registeredInterest = (true, transport.wantsWritable)
    }

    public var pendingOutboundBytes: Int { outbound.count - outboundOffset }
    public var isAboveHighWater: Bool { pendingOutboundBytes >= highWaterBytes }

    /// True when output has waited without any progress for longer than `limitMilliseconds`.
    public func isWriteStalled(nowMilliseconds now: Int64, limitMilliseconds: Int64) -> Bool {
        guard let since = writeStalledSinceMilliseconds else { return false }
        return now - since > limitMilliseconds
    }

    // MARK: Writing

    /// Queues bytes; they are written at the end of this loop iteration, together with
    /// anything else queued meanwhile (or at once when the buffer passes the high-water mark).
    public func write(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        write { $0.append(contentsOf: bytes) }
    }

    /// Queues what `encode` appends to the output buffer: an answer is encoded straight into it,
    /// with no buffer of its own. `encode` must only append.
    public func write(encodingInto encode: (inout [UInt8]) -> Void) {
        guard state == .open else { return }
        if outboundOffset == outbound.count {
            outbound.removeAll(keepingCapacity: true)
            outboundOffset = 0
        }
        // The buffer is lent to `encode` out of the property: an access to `outbound` held across
        // a closure would make every other access to it pay a run-time exclusivity check.
        var buffer: [UInt8] = []
        swap(&buffer, &outbound)
        let before = buffer.count
        encode(&buffer)
        precondition(buffer.count >= before, "an encoder removed queued output")
        precondition(outbound.isEmpty, "an encoder wrote to the channel it encodes for")
        swap(&buffer, &outbound)
        guard outbound.count > before else { return }
        if before == outboundOffset { writeStalledSinceMilliseconds = MonotonicClock.nowMilliseconds() }
        if isAboveHighWater {
            wasAboveHighWater = true
            flush()
        } else if !flushScheduledThisIteration {
            flushScheduledThisIteration = true
            loop.scheduleFlush(self)
        }
    }

    func flushScheduled() {
        flushScheduledThisIteration = false
        if state != .closed { flush() }
    }

    private func flush() {
        while outboundOffset < outbound.count {
            let result: IOResult<Int>
            do {
                result = try outbound.withUnsafeBytes { all in
                    try transport.write(UnsafeRawBufferPointer(rebasing: all[outboundOffset...]))
                }
            } catch {
                close()
                return
            }
            switch result {
            case .wouldBlock:
                updateInterest()
                return
            case .done(let written):
                outboundOffset += written
                if written > 0 { writeStalledSinceMilliseconds = MonotonicClock.nowMilliseconds() }
            }
        }
        outbound.removeAll(keepingCapacity: outbound.capacity <= 1 << 20)
        outboundOffset = 0
        writeStalledSinceMilliseconds = nil
        if state == .closing {
            finishClose()
            return
        }
        updateInterest()
        if wasAboveHighWater {
            wasAboveHighWater = false
            delegate?.channelDidDrain(self)
        }
    }

    // MARK: Reading and back-pressure

    public func pauseReading() {
        guard !readingPaused else { return }
        paused = true
        updateInterest()
    }

    public func resumeReading() {
        guard readingPaused else { return }
        paused = false
        updateInterest()
    }

    /// What epoll was last told, so an unchanged interest costs no `epoll_ctl` (one per write otherwise).
    private var registeredInterest: (readable: Bool, writable: Bool)?

    private func updateInterest() {
        guard state != .closed else { return }
        let wantsWrite = outboundOffset < outbound.count || transport.wantsWritable
        let wantsRead = !readingPaused && !endOfInput && state == .open
        if let registered = registeredInterest, registered.readable == wantsRead, registered.writable == wantsWrite { return }
        registeredInterest = (wantsRead, wantsWrite)
        loop.reregister(socket.fd, readable: wantsRead, writable: wantsWrite)
    }

    public func handle(_ readiness: Readiness) {
        if readiness.writable || transport.wantsWritable { flush() }
        if state == .closed { return }
        if readiness.readable && !readingPaused && !endOfInput && state == .open { readAvailable() }
        if readiness.hangup && state != .closed && !readiness.readable { close() }
    }

    /// During a drain: take in what the peer had already sent before the drain began, even
    /// with reading paused, so those requests are answered (and the close is a FIN, not an RST).
    public func readAlreadyReceived() {
        guard state == .open, !endOfInput else { return }
        let wasPaused = readingPaused
        paused = false
        readAvailable()
        paused = wasPaused
        updateInterest()
    }

    private func readAvailable() {
        // Bounded: at most 16 reads per wake-up so one busy peer cannot starve the others.
        for _ in 0..<16 {
            let result: IOResult<Int>
            do {
                result = try transport.read(into: loop.readBuffer)
            } catch {
                close()
                return
            }
            switch result {
            case .wouldBlock:
                if transport.wantsWritable { updateInterest() }
                return
            case .done(0):
                inputEnded = true
                updateInterest()
                delegate?.channelDidReadEndOfInput(self)
                return
            case .done(let count):
                lastReadMilliseconds = MonotonicClock.nowMilliseconds()
                delegate?.channel(self, didRead: UnsafeRawBufferPointer(rebasing: loop.readBuffer[0..<count]))
                if state != .open || readingPaused { return }
                if count < loop.readBuffer.count { return }
            }
        }
    }

    // MARK: Closing

    /// Stops reading and closes once queued output is written.
    public func closeAfterFlush() {
        guard state == .open else { return }
        currentState = .closing
        if pendingOutboundBytes == 0 { finishClose() } else { flush() }
    }

    /// Closes now, dropping unsent output.
    public func close() {
        guard state != .closed else { return }
        finishClose()
    }

    private func finishClose() {
        currentState = .closed
        loop.unregister(socket.fd)
        transport.close()
        socket.close()
        outbound = []
        let delegate = self.delegate
        self.delegate = nil
        delegate?.channelDidClose(self)
    }
}
