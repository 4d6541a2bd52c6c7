import Dispatch
import FoundationEssentials
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
    /// Taken off the loop when the client is let go, so the loop keeps no weak reference to it.
    private var deadlineTimer: RepeatingTimerHandle?

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
        deadlineTimer = loop.scheduleRepeating(everyMilliseconds: 50) { [weak self] in self?.checkDeadlines() }
    }

    /// A client let go retires its connections: each closes once its calls are answered. They
    /// hold their target, and their channels hold them, until they close.
    deinit {
        deadlineTimer?.cancel()
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

    /// Blocking form, for work on threads of its own (background jobs, tools); a request
    /// handler awaits `call(_:params:context:)` instead. Never call it on a loop thread.
    public func callAndWait(
        _ method: String, params: JSON?, context: CallContext?, timeoutMilliseconds: Int64 = 5000, replicaID: String? = nil
    ) throws(RPCError) -> JSON {
        // On any loop thread it would stall that loop (on its own loop: deadlock it).
        precondition(EventLoop.current == nil, "callAndWait blocks; never call it on an event loop thread")
        let timeout = Self.timeout(timeoutMilliseconds, within: context)
        let box = OutcomeBox()
        call(method, params: params, meta: context?.forwardedMeta, timeoutMilliseconds: timeout, replicaID: replicaID) { outcome in
            box.set(outcome.result)
        }
        return try box.wait().get()
    }

    /// A call's time: `requested`, or less when the caller has less left (at least 1 ms, so an
    /// answer to a caller out of time is a timeout, not a call never made).
    static func timeout(_ requested: Int64, within context: CallContext?) -> Int64 {
        min(requested, context.map { max(1, $0.remainingMilliseconds) } ?? requested)
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

    func takeCallID() -> Int64 {
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
