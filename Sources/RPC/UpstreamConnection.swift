import LineProtocol
import Platform
import Runtime

/// A request on its way to a replica with its `meta`: the end client and request id it is made
/// for, how long this client waits and the service token (a health probe states no budget).
struct OutgoingCall {
    let request: RPCRequest
    let client: String?
    let requestID: RequestID?
    let budgetMilliseconds: Int64?
    let token: String?

    func append(to buffer: inout [UInt8]) {
        if client == nil && requestID == nil && budgetMilliseconds == nil && token == nil {
            request.append(to: &buffer)
        } else {
            request.append(to: &buffer, client: client, requestID: requestID, budgetMilliseconds: budgetMilliseconds, token: token)
        }
        buffer.append(UInt8(ascii: "\n"))
    }
}

/// One TCP connection to a replica, carrying many calls at once. Loop-confined.
final class UpstreamConnection: EventHandler, ChannelDelegate {
    private enum State { case idle, connecting, connected, closed }

    private struct Call {
        let deadlineMilliseconds: Int64
        let completion: any ForwardCompletion
        var sent: Bool
    }

    /// Held until the connection ends, then let go (the target holds its connections). Not weak:
    /// a weak reference gives its object a side table, and every call retains its target.
    private var target: UpstreamTarget?
    private let peer: UpstreamPeer
    private var state: State = .idle
    private var socket: Socket?
    private var queued: [[UInt8]] = []
    // Touched for every call and answer: unchecked in release builds, as `Channel.outbound` says why.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private var channel: Channel?
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private var calls = CallTable<Call>()
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private var framer = LineFramer(maxLineBytes: 16 << 20)
    private var retiring = false

    init(target: UpstreamTarget) {
        self.target = target
        peer = target.peer
    }

    var isFinished: Bool { state == .closed }

    func start() {
        state = .connecting
        do {
            let socket = try Socket.connect(to: peer.address)
            self.socket = socket
            try peer.loop.register(socket.fd, readable: false, writable: true, handler: self)
        } catch {
            fail(reason: "connect failed")
        }
    }

    func send(_ call: OutgoingCall, callID: Int64, deadlineMilliseconds: Int64, completion: any ForwardCompletion) {
        guard state != .closed else {
            completion.forwardEnded(outcome(.failure(RPCError(.unavailable, "\(peer.service) connection closed", extra: ["sent": false])), .notSent))
            return
        }
        if let channel, state == .connected {
            calls[Int(callID)] = Call(deadlineMilliseconds: deadlineMilliseconds, completion: completion, sent: true)
            channel.write { call.append(to: &$0) }
        } else {
            calls[Int(callID)] = Call(deadlineMilliseconds: deadlineMilliseconds, completion: completion, sent: false)
            var line: [UInt8] = []
            call.append(to: &line)
            queued.append(line)
        }
    }

    // Connect completion (EventHandler while connecting).
    func handle(_ readiness: Readiness) {
        guard state == .connecting, let socket else { return }
        peer.loop.unregister(socket.fd)
        guard socket.pendingError() == 0 else {
            socket.close()
            self.socket = nil
            fail(reason: "connect refused")
            return
        }
        let channel = Channel(loop: peer.loop, socket: socket, peer: peer.address)
        // The channel holds this connection until it closes; a client let go retires it.
        channel.delegate = self
        do {
            try channel.activate()
        } catch {
            channel.delegate = nil
            socket.close()
            fail(reason: "register failed")
            return
        }
        self.channel = channel
        state = .connected
        target?.connectionSucceeded()
        for (key, _) in calls { calls[key]?.sent = true }
        for line in queued { channel.write(line) }
        queued.removeAll()
        // Retired while connecting (its client let go) with nothing to carry.
        if retiring && calls.isEmpty { channel.close() }
    }

    func channel(_ channel: Channel, didRead bytes: UnsafeRawBufferPointer) {
        framer.append(bytes)
        // Each line is read where the framer holds it: an answer passed on is written to its
        // client before this returns, so the framer's buffer stays its own.
        while let framed = framer.nextShared() {
            guard case .line(let line) = framed, !line.isEmpty else { continue }
            guard let response = RawResponse.decode(line: line, limits: Self.answerLimits) else {
                refuseMalformedAnswer(channel)
                return
            }
            // An id no call waits for is a late answer (its call timed out): dropped.
            guard let callID = response.id.intValue, let call = calls.removeValue(forKey: Int(callID)) else { continue }
            call.completion.forwardEnded(outcome(response.outcome, nil))
        }
        if retiring && calls.isEmpty { channel.close() }
    }

    private static let answerLimits = JSONLimits(maxDepth: 64, maxBytes: 16 << 20)

    /// Which call a malformed line meant cannot be known and nothing after it can be trusted: every
    /// call on this connection ends now (not at its deadline), the connection closes, and the
    /// bytes go nowhere (never into a log: they may hold a secret).
    private func refuseMalformedAnswer(_ channel: Channel) {
        peer.logger.warning("upstream answered a malformed line", [
            "upstream.service": .string(peer.service), "upstream.address": .string(peer.address.description),
        ])
        let failed = calls
        calls.removeAll()
        for (_, call) in failed {
            call.completion.forwardEnded(outcome(.failure(RPCError(.unavailable, "\(peer.service) answered a malformed response", extra: ["sent": true])), .malformedAnswer))
        }
        channel.close()
    }

    func channelDidDrain(_ channel: Channel) {}

    func channelDidReadEndOfInput(_ channel: Channel) { channel.close() }

    func channelDidClose(_ channel: Channel) {
        fail(reason: "connection lost")
    }

    private func fail(reason: String) {
        let wasConnected = state == .connected
        state = .closed
        if !wasConnected { target?.connectionFailed() }
        target = nil
        let failed = calls
        calls.removeAll()
        queued.removeAll()
        for (_, call) in failed {
            // `data.sent` is for `callAndWait` callers, who see only the error: `false` means a
            // retry elsewhere cannot run the request twice. `call` callers read `linkFailure`.
            let error = RPCError(.unavailable, "\(peer.service) \(reason)", extra: ["sent": .bool(call.sent)])
            call.completion.forwardEnded(outcome(.failure(error), call.sent ? .lostAfterSending : .notSent))
        }
    }

    /// A call's end as its caller sees it, with this connection's replica.
    private func outcome(_ result: Result<RawJSON, RPCError>, _ linkFailure: LinkFailure?) -> ForwardOutcome {
        ForwardOutcome(result: result, address: peer.address, linkFailure: linkFailure)
    }

    func checkDeadlines(nowMilliseconds now: Int64) {
        for (callID, call) in calls where call.deadlineMilliseconds <= now {
            calls.removeValue(forKey: callID)
            call.completion.forwardEnded(outcome(.failure(RPCError(.timeout, "\(peer.service) did not answer in time")), .timedOut))
        }
    }

    func closeWhenIdle() {
        retiring = true
        if calls.isEmpty { channel?.close() }
    }
}
