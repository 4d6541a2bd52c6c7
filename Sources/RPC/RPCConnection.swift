import LineProtocol
import Platform
import Runtime

/// The line protocol on one server-side connection: frames lines, decodes JSON-RPC,
/// dispatches each request, writes answers as they come (possibly out of order), and
/// applies the per-connection limits. Confined to the loop thread.
final class RPCConnection: ChannelDelegate, ServedConnection, @unchecked Sendable {
    private struct Pending {
        let id: JSON?
        let method: String
        let deadlineMilliseconds: Int64
        let batch: Int?
    }

    let channel: Channel
    private let server: RPCServer
    // Loop-confined and touched for every request: unchecked in release builds, as
    // `Channel.outbound` says why.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private var framer: LineFramer
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private var pending = CallTable<Pending>()
    private var batches: [Int: BatchCollector] = [:]
    private var nextToken = 0
    /// When the unfinished line began to arrive (the slow-line limit), and which line that is
    /// (`LineFramer.endedLineCount` then): a client whose every write ends inside a line is still
    /// fast as long as each of those lines ends.
    private var partialLineSinceMilliseconds: Int64?
    private var partialLineNumber = 0
    private var draining = false
    /// True while `processLines` runs: an answer given inline (during dispatch) must not start
    /// another pass, or pipelined requests answered at once recurse until the stack overflows.
    private var processing = false

    /// The peer's address as text: every request names its client, and `inet_ntop` is not free.
    private let peerHost: String?

    /// This connection's number on its server, and how many requests it has been given.
    private let number: UInt64
    private var requestsNumbered: UInt64 = 0
    /// Made on the first request, on the connection's loop (whose prefix its ids carry).
    private var requestIDIssuer: RequestIDIssuer?

    init(channel: Channel, server: RPCServer, number: UInt64) {
        self.channel = channel
        self.server = server
        self.number = number
        self.peerHost = channel.peer?.host
        self.framer = LineFramer(maxLineBytes: server.limits.maxLineBytes)
    }

    var inflightCount: Int { pending.count }
    var isQuiet: Bool { pending.isEmpty && !framer.hasPartialLine && channel.pendingOutboundBytes == 0 }

    // MARK: ChannelDelegate

    func channel(_ channel: Channel, didRead bytes: UnsafeRawBufferPointer) {
        framer.append(bytes)
        processLines()
    }

    func channelDidDrain(_ channel: Channel) { processLines() }

    func channelDidReadEndOfInput(_ channel: Channel) { processLines() }

    func channelDidClose(_ channel: Channel) {
        pending.removeAll()
        batches.removeAll()
        server.connectionClosed(self)
    }

    // MARK: Lines

    private func processLines() {
        guard !processing else { return }
        processing = true
        defer { processing = false }
        // While draining, complete lines already received are still answered; nothing more is read.
        while channel.state == .open && pending.count < server.limits.maxInflightPerConnection && !channel.isAboveHighWater {
            guard let framed = framer.nextSpan() else { break }
            switch framed {
            case .oversized:
                let error = RPCError(.lineTooLong, "line longer than \(server.limits.maxLineBytes) bytes; it was discarded")
                send(refused(RPCResponse(id: .null, error: error)))
            case .line(let range):
                if range.isEmpty { continue }
                // Decoded where the framer holds it: nothing decoded keeps the line's bytes.
                framer.withBytes(of: range) { handleLine($0) }
            }
        }
        let saturated = pending.count >= server.limits.maxInflightPerConnection || channel.isAboveHighWater
        if saturated || draining { channel.pauseReading() } else { channel.resumeReading() }
        notePartialLine(saturated: saturated)
        // Only once every line received is handled: a close decided mid-pass would leave the rest unanswered.
        closeIfFinished()
    }

    /// While this side holds the client back (in-flight limit, unread answers), its unfinished
    /// line cannot end: the clock starts again once reading resumes.
    private func notePartialLine(saturated: Bool) {
        guard framer.hasPartialLine, !saturated else {
            partialLineSinceMilliseconds = nil
            return
        }
        if partialLineSinceMilliseconds == nil || partialLineNumber != framer.endedLineCount {
            partialLineSinceMilliseconds = MonotonicClock.nowMilliseconds()
            partialLineNumber = framer.endedLineCount
        }
    }

    private func handleLine(_ bytes: UnsafeBufferPointer<UInt8>) {
        let limits = JSONLimits(maxDepth: JSONLimits.default.maxDepth, maxBytes: server.limits.maxLineBytes)
        if let single = RPCDecoder.decodeSingle(line: bytes, limits: limits) {
            handleEntry(single, batch: nil)
            return
        }
        // Not the common line: `decode` would try the envelope again before the general parser.
        switch RPCDecoder.decodeInGeneral(line: bytes, limits: limits, maxBatch: server.limits.maxBatchSize) {
        case .failure(let response):
            send(refused(response))
        case .single(let entry):
            handleEntry(entry, batch: nil)
        case .batch(let entries):
            let expected = entries.filter(\.expectsAnswer).count
            var batchToken: Int?
            if expected > 0 {
                batchToken = takeToken()
                batches[batchToken!] = BatchCollector(expecting: expected)
            }
            for entry in entries { handleEntry(entry, batch: batchToken) }
        }
    }

    /// The dispatcher counts a refused line like a request, and may answer `rate_limited` instead.
    private func refused(_ response: RPCResponse) -> RPCResponse {
        guard case .failure(let error) = response.outcome else { return response }
        guard let replacement = server.dispatcher.refusedLine(reason: error.reasonText ?? "invalid_request", client: peerHost) else {
            return response
        }
        return RPCResponse(id: response.id, error: replacement)
    }

    private func handleEntry(_ entry: RPCEntry, batch: Int?) {
        switch entry {
        case .invalid(let response):
            answer(refused(response), batch: batch)
        case .request(let request):
            dispatch(request, batch: batch)
        }
    }

    private func dispatch(_ request: RPCRequest, batch: Int?) {
        guard server.carriesServiceToken(request) else {
            let refusal = RPCError(.unauthenticated, "this service accepts calls from Latchkey services only")
            if let id = request.id { answer(id: id, reply: .outcome(.failure(refusal)), batch: batch) }
            return
        }
        let token = takeToken()
        let deadline = channel.loop.stepMilliseconds + server.limits.requestTimeoutMilliseconds
        requestsNumbered &+= 1
        let issued = RequestID(issuer: requestIDIssuer ?? makeRequestIDIssuer(), request: requestsNumbered)
        let context = server.makeContext(for: request, peerHost: peerHost, issued: issued, deadlineMilliseconds: deadline)
        let loop = channel.loop
        dispatchingToken = token
        // The reply holds the connection until it is given (a closed one drops it): a weak
        // reference would give the connection a side table, slowing its every retain and release.
        server.dispatcher.dispatch(request, context: context) { [self] (reply: RPCReply) in
            if loop.isInLoopThread {
                complete(token: token, reply: reply)
            } else {
                loop.execute { self.complete(token: token, reply: reply) }
            }
        }
        dispatchingToken = nil
        // An answer given inline (ping, a refusal) was written during the call: nothing is pending.
        // Any other is answered on this loop after this returns, and finds its entry.
        if let inline = inlineReply {
            inlineReply = nil
            if let id = request.id { answer(id: id, reply: inline, batch: batch) }
            return
        }
        pending[token] = Pending(id: request.id, method: request.method, deadlineMilliseconds: deadline, batch: batch)
    }

    /// The request being handed to the dispatcher, and its answer if it came back during the call.
    private var dispatchingToken: Int?
    private var inlineReply: RPCReply?

    private func complete(token: Int, reply: RPCReply) {
        if token == dispatchingToken {
            inlineReply = reply
            return
        }
        // A late answer (after a timeout was sent) finds nothing pending and is dropped.
        guard let entry = pending.removeValue(forKey: token) else { return }
        if let id = entry.id {
            answer(id: id, reply: reply, batch: entry.batch)
        }
        // A pass can only change something when a line waits, reading is held back, the answer
        // filled the output past its mark, or the connection is ending; most answers need none.
        if framer.hasFramedLine || channel.readingPaused || channel.isAboveHighWater || channel.endOfInput || draining {
            processLines()
        }
    }

    private func answer(_ response: RPCResponse, batch: Int?) {
        answer(id: response.id, reply: .outcome(response.outcome), batch: batch)
    }

    /// Encodes the answer straight into the channel's output buffer, or adds it to its batch.
    private func answer(id: JSON, reply: RPCReply, batch: Int?) {
        guard let batch else {
            channel.write { buffer in
                reply.append(id: id, to: &buffer)
                buffer.append(UInt8(ascii: "\n"))
            }
            return
        }
        if let line = batches[batch]?.add(id: id, reply: reply) {
            batches.removeValue(forKey: batch)
            channel.write { buffer in
                buffer.append(contentsOf: line)
                buffer.append(UInt8(ascii: "\n"))
            }
        }
    }

    /// Encodes the answer and its `\n` straight into the channel's output buffer.
    private func send(_ response: RPCResponse) {
        channel.write { buffer in
            response.append(to: &buffer)
            buffer.append(UInt8(ascii: "\n"))
        }
    }

    private func makeRequestIDIssuer() -> RequestIDIssuer {
        let issuer = server.requestIDIssuer(connection: number, peerHost: peerHost)
        requestIDIssuer = issuer
        return issuer
    }

    private func takeToken() -> Int {
        nextToken &+= 1
        return nextToken
    }

    private func closeIfFinished() {
        if (channel.endOfInput || draining) && pending.isEmpty && channel.state == .open {
            if framer.hasPartialLine && !draining {
                // The peer ended in the middle of a line: nothing more can complete it.
                send(RPCResponse(id: .null, error: .parseError("input ended inside a line")))
            }
            channel.closeAfterFlush()
        }
    }

    // MARK: Timers

    /// Called by the server's tick: request deadlines, slow lines, idle and stalled peers.
    func checkTimeouts(nowMilliseconds now: Int64) {
        let limits = server.limits
        for (token, entry) in pending where entry.deadlineMilliseconds <= now {
            complete(token: token, reply: .outcome(.failure(RPCError(.timeout, "\(entry.method) took longer than \(limits.requestTimeoutMilliseconds) ms"))))
        }
        guard channel.state == .open else { return }
        if channel.transport.isHandshaking && now - channel.lastReadMilliseconds > limits.lineTimeoutMilliseconds {
            server.logger.info("closing slow client", ["net.peer": .string(channel.peer?.description ?? "?"), "net.reason": "handshake_timeout"])
            channel.close()
        } else if let since = partialLineSinceMilliseconds, now - since > limits.lineTimeoutMilliseconds {
            server.logger.info("closing slow client", ["net.peer": .string(channel.peer?.description ?? "?"), "net.reason": "line_timeout"])
            channel.close()
        } else if channel.isWriteStalled(nowMilliseconds: now, limitMilliseconds: limits.writeTimeoutMilliseconds) {
            server.logger.info("closing slow client", ["net.peer": .string(channel.peer?.description ?? "?"), "net.reason": "write_timeout"])
            channel.close()
        } else if isQuiet && now - channel.lastReadMilliseconds > limits.idleTimeoutMilliseconds {
            channel.close()
        }
    }

    /// During shutdown: finish what is in flight, then close.
    func drain() {
        draining = true
        channel.readAlreadyReceived()
        processLines()
    }
}

extension RPCEntry {
    public var expectsAnswer: Bool {
        switch self {
        case .invalid: return true
        case .request(let request): return !request.isNotification
        }
    }
}
