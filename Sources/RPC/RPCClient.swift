import Dispatch
import Foundation
import LineProtocol
import Platform
import Runtime

/// How a call ended, as this client saw it. Only `linkFailure` speaks about the link to the
/// replica; an error in `result` without one is the replica's own answer (perhaps about a
/// dependency of its own) and never a reason to mark the replica down or to send again.
public struct UpstreamOutcome<Answer: Sendable>: Sendable {
    public let result: Result<Answer, RPCError>
    /// The replica tried; nil when none could be.
    public let address: SocketAddress?
    public let linkFailure: LinkFailure?
}

/// A call's outcome with its result decoded.
public typealias CallOutcome = UpstreamOutcome<JSON>
/// A call's outcome with its result as the replica's bytes, checked but not decoded (`RawJSON`).
public typealias ForwardOutcome = UpstreamOutcome<RawJSON>

/// A failure of this client's own link to a replica: no answer came back.
public enum LinkFailure: Sendable, Equatable {
    /// Never written to a connection (no replica, refused, closed before sending): it did not run.
    case notSent
    /// The connection ended after the request was written: it may have run.
    case lostAfterSending
    /// No answer before the deadline: it may have run.
    case timedOut
    /// The replica answered a line that is not a well-formed answer (not JSON, a broken result,
    /// no valid id): it may have run. The line is never passed on; every call on that
    /// connection ends with this and the connection closes.
    case malformedAnswer
}

/// A client for one service's replicas: a few multiplexed connections per address, ids
/// rewritten so any number of callers share them, deadlines on every call, and a short
/// back-off on an address that refuses or drops connections.
///
/// Callbacks run on the loop thread. `callAndWait` is for worker threads only.
public final class RPCClient: @unchecked Sendable {
    public let loop: EventLoop
    public let service: String
    public let endpoints: [Endpoint]
    private let connectionsPerAddress: Int
    /// Sent as `meta.token` on every call when set (`--service-token`).
    public let serviceToken: String?
    private let logger: Logger
    // Loop-confined state.
    private var targets: [UpstreamTarget] = []
    private var roundRobin = 0
    /// Replicas the pool above this client took out of rotation (`setOutOfRotation`), skipped by
    /// a call that names no replica; with the generation that set them. Loop-confined, so a
    /// forward reads them without taking the pool's lock, which every loop would share.
    private var outOfRotation: Set<SocketAddress> = []
    private var rotationGeneration: UInt64 = 0
    private var nextCallID: Int64 = 0

    /// `resolved`: the endpoints' addresses when the caller resolved them already (a gateway
    /// resolves once for the clients of all its loops); nil resolves here (blocks: DNS).
    public init(
        loop: EventLoop, service: String, endpoints: [Endpoint], resolved: [SocketAddress]? = nil, connectionsPerAddress: Int = 2,
        serviceToken: String? = nil, logger: Logger
    ) {
        precondition(!endpoints.isEmpty && connectionsPerAddress > 0)
        self.loop = loop
        self.service = service
        self.endpoints = endpoints
        self.connectionsPerAddress = connectionsPerAddress
        self.serviceToken = serviceToken
        self.logger = logger
        let addresses = resolved ?? Self.resolve(endpoints)
        loop.execute { [self] in self.replaceTargets(addresses) }
        loop.scheduleRepeating(everyMilliseconds: 50) { [weak self] in self?.checkDeadlines() }
    }

    /// A client let go retires its connections: each closes once its calls are answered. They
    /// hold their target, and their channels hold them, until they close.
    deinit {
        // No other reference is left, so nothing on the loop reads `targets` while this does.
        let targets = Retiring(targets)
        loop.execute { targets.retire() }
    }

    /// A dropped client's targets, handed to their loop to be retired there.
    private struct Retiring: @unchecked Sendable {
        let targets: [UpstreamTarget]
        init(_ targets: [UpstreamTarget]) { self.targets = targets }
        func retire() { for target in targets { target.retire() } }
    }

    /// Resolves names again (Docker Compose scaling adds and removes addresses). Blocks: call off the loop.
    public func refreshAddresses() { replaceAddresses(Self.resolve(endpoints)) }

    /// Takes `addresses` out of rotation for calls that name no replica (empty: every replica is
    /// in). Applied at once on this client's loop and posted to it from any other thread; a
    /// change older than the one applied (`generation`, increasing) is dropped when it arrives.
    public func setOutOfRotation(_ addresses: Set<SocketAddress>, generation: UInt64) {
        guard loop.isInLoopThread else {
            loop.execute { [self] in setOutOfRotation(addresses, generation: generation) }
            return
        }
        guard generation > rotationGeneration else { return }
        rotationGeneration = generation
        outOfRotation = addresses
    }

    /// Addresses resolved elsewhere (Compose scaling added or removed some); an empty list (a
    /// failed lookup) keeps the current ones. Safe from any thread.
    public func replaceAddresses(_ resolved: [SocketAddress]) {
        guard !resolved.isEmpty else { return }
        loop.execute { [self] in self.replaceTargets(resolved) }
    }

    /// The addresses of `endpoints`, duplicates dropped. Blocks (DNS): call off the loop.
    public static func resolve(_ endpoints: [Endpoint]) -> [SocketAddress] {
        var addresses: [SocketAddress] = []
        for endpoint in endpoints {
            for address in (try? SocketAddress.resolve(host: endpoint.host, port: endpoint.port)) ?? [] where !addresses.contains(address) {
                addresses.append(address)
            }
        }
        return addresses
    }

    private func replaceTargets(_ addresses: [SocketAddress]) {
        var kept: [UpstreamTarget] = []
        for address in addresses {
            kept.append(targets.first { $0.address == address } ?? UpstreamTarget(address: address, client: self))
        }
        for target in targets where !addresses.contains(target.address) { target.retire() }
        targets = kept
        learnReplicaIDs()
    }

    /// The addresses currently known, and whether each is taking calls.
    public func addressStates(completion: @escaping @Sendable ([(address: SocketAddress, up: Bool)]) -> Void) {
        loop.execute { [self] in
            let now = MonotonicClock.nowMilliseconds()
            completion(targets.map { ($0.address, $0.downUntilMilliseconds <= now) })
        }
    }

    // MARK: Calling

    /// Calls `method`; `completion` runs on the loop thread exactly once.
    /// `address` or `replicaID` pins the call to one replica (state that lives in one replica,
    /// like a verification request); `excluding` skips replicas (for a safe retry).
    public func call(
        _ method: String, params: JSON?, meta: RequestMeta? = nil, timeoutMilliseconds: Int64,
        address: SocketAddress? = nil, replicaID: String? = nil, excluding: Set<SocketAddress> = [],
        completion: @escaping @Sendable (CallOutcome) -> Void
    ) {
        forward(
            method, params: params, client: meta?.client, requestID: meta?.requestID, timeoutMilliseconds: timeoutMilliseconds, address: address,
            replicaID: replicaID, excluding: excluding, to: DecodingCompletion(completion))
    }

    /// `call`, with the result left as the replica wrote it (checked, not decoded): for passing it
    /// on. `client` and `requestID` are the end client's and request's, written into `meta`
    /// (given apart, so a forwarded call builds no `RequestMeta`). `completion` is an object (the
    /// gateway's forwarded call itself), so a call allocates no closure to reach it.
    public func forward(
        _ method: String, params: JSON?, client: String? = nil, requestID: RequestID? = nil, timeoutMilliseconds: Int64,
        address: SocketAddress? = nil, replicaID: String? = nil, excluding: Set<SocketAddress> = [], to completion: any ForwardCompletion
    ) {
        // On the loop thread (the gateway forwarding) go straight on, with no closure to allocate;
        // elsewhere hop to the loop and come back here.
        guard loop.isInLoopThread else {
            loop.execute { [self] in
                forward(
                    method, params: params, client: client, requestID: requestID, timeoutMilliseconds: timeoutMilliseconds, address: address,
                    replicaID: replicaID, excluding: excluding, to: completion)
            }
            return
        }
        let pinned = replicaID.flatMap { id in targets.first { $0.replicaID == id }?.address } ?? address
        if replicaID != nil && pinned == nil {
            learnReplicaIDs()
            let error = RPCError(.unavailable, "\(service) replica \(replicaID!) is not known", extra: ["sent": false])
            completion.forwardEnded(ForwardOutcome(result: .failure(error), address: nil, linkFailure: .notSent))
            return
        }
        guard let target = pickTarget(address: pinned, excluding: excluding) else {
            let error = RPCError(.unavailable, "\(service) is unavailable", extra: ["sent": false])
            completion.forwardEnded(ForwardOutcome(result: .failure(error), address: nil, linkFailure: .notSent))
            return
        }
        let callID = takeCallID()
        // The callee learns how long this caller waits (`meta.budget_ms`, relative: clocks of
        // two processes do not compare), so it never starts work after the caller gave up.
        let call = OutgoingCall(
            request: RPCRequest(method: method, params: params, id: .int(callID)), client: client, requestID: requestID,
            budgetMilliseconds: timeoutMilliseconds, token: serviceToken)
        let deadline = loop.stepMilliseconds + timeoutMilliseconds
        target.send(call, callID: callID, deadlineMilliseconds: deadline, completion: completion)
    }

    /// Blocking form for handlers on worker threads. Never call it on the loop thread.
    public func callAndWait(
        _ method: String, params: JSON?, context: CallContext?, timeoutMilliseconds: Int64 = 5000, replicaID: String? = nil
    ) throws(RPCError) -> JSON {
        // On any loop thread it would stall that loop (on its own loop: deadlock it).
        precondition(EventLoop.current == nil, "callAndWait blocks; never call it on an event loop thread")
        let timeout = min(timeoutMilliseconds, context.map { max(1, $0.remainingMilliseconds) } ?? timeoutMilliseconds)
        let box = OutcomeBox()
        call(method, params: params, meta: context?.forwardedMeta, timeoutMilliseconds: timeout, replicaID: replicaID) { outcome in
            box.set(outcome.result)
        }
        return try box.wait().get()
    }

    /// Asks every known address for its `replica_id` (`<service>.health`), so calls can be
    /// pinned by replica. Runs on its own when an address is first seen; loop thread.
    private func learnReplicaIDs() {
        for target in targets where target.replicaID == nil { target.learnReplicaID() }
    }

    /// The replica ids learned so far, by address. For health pages and tests.
    public func replicaIDs(completion: @escaping @Sendable ([SocketAddress: String]) -> Void) {
        loop.execute { [self] in
            var known: [SocketAddress: String] = [:]
            for target in targets { if let id = target.replicaID { known[target.address] = id } }
            completion(known)
        }
    }

    fileprivate func takeCallID() -> Int64 {
        nextCallID &+= 1
        return nextCallID
    }

    private func pickTarget(address: SocketAddress?, excluding: Set<SocketAddress>) -> UpstreamTarget? {
        if let address { return targets.first { $0.address == address } }
        let now = loop.stepMilliseconds
        // The common case (nothing excluded, every replica in rotation) builds no list of candidates.
        let candidates =
            excluding.isEmpty && outOfRotation.isEmpty
            ? targets : targets.filter { !excluding.contains($0.address) && !outOfRotation.contains($0.address) }
        guard !candidates.isEmpty else { return nil }
        for offset in 0..<candidates.count {
            let target = candidates[(roundRobin + offset) % candidates.count]
            if target.downUntilMilliseconds <= now {
                roundRobin = (roundRobin + offset + 1) % candidates.count
                return target
            }
        }
        return nil
    }

    private func checkDeadlines() {
        let now = MonotonicClock.nowMilliseconds()
        for target in targets { target.checkDeadlines(nowMilliseconds: now) }
    }

    var connectionCount: Int { connectionsPerAddress }
    var clientLogger: Logger { logger }
}

/// What a connection to one replica needs to know, built once per replica. A connection holds
/// its own copy: it may outlive its client while a connect is under way.
struct UpstreamPeer {
    let address: SocketAddress
    let loop: EventLoop
    let service: String
    let logger: Logger
}

/// One replica address: its connections and its back-off state. Loop-confined.
final class UpstreamTarget {
    let peer: UpstreamPeer
    var address: SocketAddress { peer.address }
    /// Read only from calls the client makes (it is alive then).
    unowned let client: RPCClient
    private let connectionCount: Int
    // Read for every call: unchecked in release builds, as `Channel.outbound` says why.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private var connections: [UpstreamConnection] = []
    private var nextConnection = 0
    /// The loop turn `nextConnection` was chosen in.
    private var lastTurn: UInt64 = 0
    var downUntilMilliseconds: Int64 = 0
    private var consecutiveFailures = 0
    /// The replica's own name, learned from its health answer; it survives restarts on the same address.
    var replicaID: String?
    private var learning = false

    init(address: SocketAddress, client: RPCClient) {
        peer = UpstreamPeer(address: address, loop: client.loop, service: client.service, logger: client.clientLogger)
        self.client = client
        connectionCount = client.connectionCount
    }

    func send(_ call: OutgoingCall, callID: Int64, deadlineMilliseconds: Int64, completion: any ForwardCompletion) {
        connectionForThisTurn().send(call, callID: callID, deadlineMilliseconds: deadlineMilliseconds, completion: completion)
    }

    /// Calls made in one turn of the loop share a connection, the next turn takes the next one
    /// (opening it while there are fewer than `connectionCount`): a client's pipelined requests
    /// then travel together and their answers come back in one read, so they leave for the client
    /// in one write rather than one per connection.
    private func connectionForThisTurn() -> UpstreamConnection {
        let turn = peer.loop.iteration
        if turn == lastTurn, nextConnection < connections.count, !connections[nextConnection].isFinished {
            return connections[nextConnection]
        }
        lastTurn = turn
        connections.removeAll { $0.isFinished }
        guard connections.count >= connectionCount else {
            let connection = UpstreamConnection(target: self)
            connections.append(connection)
            nextConnection = connections.count - 1
            connection.start()
            return connection
        }
        nextConnection = (nextConnection + 1) % connections.count
        return connections[nextConnection]
    }

    func learnReplicaID() {
        guard !learning else { return }
        learning = true
        let callID = client.takeCallID()
        let call = OutgoingCall(
            request: RPCRequest(method: "\(client.service).health", params: nil, id: .int(callID)), client: nil, requestID: nil,
            budgetMilliseconds: nil, token: client.serviceToken)
        let deadline = MonotonicClock.nowMilliseconds() + 2000
        send(call, callID: callID, deadlineMilliseconds: deadline, completion: ClosureCompletion { [self] outcome in
            learning = false
            if case .success(let health) = outcome.result, let id = health.decoded()["replica_id"]?.stringValue { replicaID = id }
        })
    }

    func connectionSucceeded() {
        consecutiveFailures = 0
        downUntilMilliseconds = 0
    }

    func connectionFailed() {
        consecutiveFailures += 1
        // 100 ms, 200 ms, ... up to 2 s: a dead replica is skipped fast, a returning one is found soon.
        let backoff = min(2000, 100 << min(consecutiveFailures - 1, 5))
        downUntilMilliseconds = MonotonicClock.nowMilliseconds() + Int64(backoff)
    }

    func checkDeadlines(nowMilliseconds now: Int64) {
        for connection in connections { connection.checkDeadlines(nowMilliseconds: now) }
    }

    func retire() {
        for connection in connections { connection.closeWhenIdle() }
    }
}

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

/// Hands one outcome from the loop thread to a waiting worker thread.
private final class OutcomeBox: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private var outcome: Result<JSON, RPCError>?

    func set(_ value: Result<JSON, RPCError>) {
        outcome = value
        semaphore.signal()
    }

    func wait() -> Result<JSON, RPCError> {
        semaphore.wait()
        return outcome!
    }
}
