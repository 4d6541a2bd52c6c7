import Dispatch
import FoundationEssentials
import LineProtocol
import Platform
import RPC
import Runtime

/// One replica as the gateway sees it.
public struct ReplicaStatus: Sendable {
    public enum State: String, Sendable {
        /// Not probed yet: in rotation.
        case unknown
        case up
        case down
    }

    public let address: SocketAddress
    public var state: State = .unknown
    /// What `<service>.health` reported as `replica_id`.
    public var replicaID: String?
    public var lastCheckedMilliseconds: Int64?
    public var lastError: String?
    /// The `status` its health reported (`ok`, or what the service says is wrong).
    public var reportedStatus: String?

    public var inRotation: Bool { state != .down }

    var json: JSON {
        var object: [String: JSON] = ["address": .string(address.description), "state": .string(state.rawValue)]
        object["replica_id"] = replicaID.map(JSON.string) ?? .null
        object["checked_ms_ago"] = lastCheckedMilliseconds.map { .int(MonotonicClock.nowMilliseconds() - $0) } ?? .null
        if let lastError { object["error"] = .string(lastError) }
        if let reportedStatus { object["status"] = .string(reportedStatus) }
        return .object(object)
    }
}

/// A service's replicas: the multiplexed `RPCClient`s that carry calls (one per event loop), plus the health the
/// gateway has observed (active probes of `<service>.health` and forwards whose link failed;
/// never an error the replica answered). A replica marked down leaves rotation until a probe
/// answers again. Thread-safe.
public final class ServicePool: @unchecked Sendable {
    public let service: String
    /// The main loop's client: health probes go through it.
    public let client: RPCClient
    /// Every loop's client, the main loop's first.
    private let clients: [RPCClient]
    private let healthTimeoutMilliseconds: Int64
    private let logger: Logger
    private let lock = Lock()
    private var replicas: [SocketAddress: ReplicaStatus] = [:]
    private var order: [SocketAddress] = []
    /// Recomputed on every state change and handed to every loop's client, which skips these
    /// for a call that names no replica: a forward takes no lock for it.
    private var outOfRotation: Set<SocketAddress> = []
    private var rotationGeneration: UInt64 = 0

    public convenience init(service: String, client: RPCClient, healthTimeoutMilliseconds: Int64, logger: Logger) {
        self.init(service: service, clients: [client], healthTimeoutMilliseconds: healthTimeoutMilliseconds, logger: logger)
    }

    /// `clients`: one per event loop, the main loop's first.
    public init(service: String, clients: [RPCClient], healthTimeoutMilliseconds: Int64, logger: Logger) {
        precondition(!clients.isEmpty, "a pool needs a client")
        self.service = service
        self.client = clients[0]
        self.clients = clients
        self.healthTimeoutMilliseconds = healthTimeoutMilliseconds
        self.logger = logger
    }

    // MARK: Health

    /// Probes every known address with `<service>.health`. Safe from any thread.
    public func probe() {
        client.addressStates { [self] states in
            let addresses = states.map(\.address)
            sync(addresses: addresses)
            for address in addresses {
                client.call("\(service).health", params: nil, timeoutMilliseconds: healthTimeoutMilliseconds, address: address) { [self] outcome in
                    record(probeOf: address, outcome: outcome)
                }
            }
        }
    }

    /// The client of the calling thread's loop, so a forward never leaves the loop it came in on;
    /// the main loop's from any other thread.
    public var clientForCurrentLoop: RPCClient {
        clients.first { $0.loop.isInLoopThread } ?? client
    }

    /// The client of the first loop whose number is `part` modulo `parts` (a `LoopLocal` part),
    /// or the main loop's when none is.
    func client(forLoopPart part: Int, of parts: Int) -> RPCClient {
        clients.first { $0.loop.number % parts == part } ?? client
    }

    /// Re-resolves DNS names off the event loop (Compose scaling), then probes the new set.
    public func refreshAddresses() {
        DispatchQueue.global().async { [self] in
            // One lookup for every loop's client.
            let resolved = RPCClient.resolve(client.endpoints)
            for client in clients { client.replaceAddresses(resolved) }
            probe()
        }
    }

    private func sync(addresses: [SocketAddress]) {
        lock.lock()
        defer { lock.unlock() }
        for address in addresses where replicas[address] == nil { replicas[address] = ReplicaStatus(address: address) }
        for address in order where !addresses.contains(address) { replicas.removeValue(forKey: address) }
        order = addresses
        recomputeRotationLocked()
    }

    private func recomputeRotationLocked() {
        let down = Set(replicas.values.filter { !$0.inRotation }.map(\.address))
        let skipped = down.count >= replicas.count ? [] : down
        guard skipped != outOfRotation else { return }
        outOfRotation = skipped
        rotationGeneration += 1
        for client in clients { client.setOutOfRotation(skipped, generation: rotationGeneration) }
    }

    private func record(probeOf address: SocketAddress, outcome: CallOutcome) {
        lock.lock()
        defer { lock.unlock() }
        guard var status = replicas[address] else { return }
        let previous = status.state
        status.lastCheckedMilliseconds = MonotonicClock.nowMilliseconds()
        switch (outcome.linkFailure, outcome.result) {
        case (let failure?, _):
            status.state = .down
            status.lastError = failure == .timedOut ? Reason.timeout.rawValue : Reason.unavailable.rawValue
        case (nil, .success(let result)):
            status.state = .up
            status.replicaID = result["replica_id"]?.stringValue ?? status.replicaID
            status.reportedStatus = result["status"]?.stringValue
            status.lastError = nil
        case (nil, .failure):
            // It answered, even if with an error (perhaps an older build without health): reachable.
            status.state = .up
            status.lastError = nil
        }
        replicas[address] = status
        if previous != status.state { recomputeRotationLocked() }
        if previous != status.state && previous != .unknown {
            logger.info("replica state changed", [
                "upstream.service": .string(service), "upstream.address": .string(address.description),
                "upstream.state": .string(status.state.rawValue),
            ])
        }
    }

    /// A forward to `address` failed at the transport level: out of rotation until a probe answers.
    public func markFailed(_ address: SocketAddress, reason: String) {
        lock.lock()
        defer { lock.unlock() }
        guard var status = replicas[address], status.state != .down else { return }
        status.state = .down
        status.lastError = reason
        replicas[address] = status
        recomputeRotationLocked()
        logger.warning("replica marked down", [
            "upstream.service": .string(service), "upstream.address": .string(address.description), "upstream.reason": .string(reason),
        ])
    }

    // MARK: Routing

    /// A replica to try when the client has none in rotation: one not known to be down first.
    public func fallbackAddress(excluding excluded: Set<SocketAddress>) -> SocketAddress? {
        lock.lock()
        defer { lock.unlock() }
        let candidates = order.filter { !excluded.contains($0) }
        return candidates.first { replicas[$0]?.inRotation ?? true } ?? candidates.first
    }

    /// The address whose health reported `replicaID`, if known.
    public func address(forReplicaID replicaID: String) -> SocketAddress? {
        lock.lock()
        defer { lock.unlock() }
        return order.first { replicas[$0]?.replicaID == replicaID }
    }

    public var replicaCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return max(1, order.count)
    }

    public var statuses: [ReplicaStatus] {
        lock.lock()
        defer { lock.unlock() }
        return order.compactMap { replicas[$0] }
    }

    public var healthJSON: JSON {
        let list = statuses
        let up = list.filter { $0.state == .up }.count
        return ["replicas": .array(list.map(\.json)), "up": .int(Int64(up)), "total": .int(Int64(list.count))]
    }
}
