import FoundationEssentials
import Platform

/// The lifecycle every server shares: `idle -> listening -> draining -> stopped`.
public enum ServerState: Sendable { case idle, listening, draining, stopped }

/// What a server runs on each accepted socket (an `RPCConnection`, an `HTTPConnection`).
/// Loop thread only.
/// (`SendableMetatype`: connections are set up on their loop from closures handed across threads.)
public protocol ServedConnection: AnyObject, SendableMetatype {
    var channel: Channel { get }
    var inflightCount: Int { get }
    func checkTimeouts(nowMilliseconds: Int64)
    /// Finish what is in flight, then close.
    func drain()
}

/// The part of a TCP server that does not depend on its protocol: the listening socket (on the
/// group's main loop), the admission of each accepted socket against the limits (its own and the
/// process's descriptor budget, counted under one lock for every loop), the hand-off of admitted
/// sockets round-robin to the group's loops, a 100 ms tick on each loop for its connections'
/// timers, and the drain state machine, which drains every loop. Impossible transitions crash.
/// State marked "main loop" is touched on the main loop only; each `LoopShard` on its own loop.
public final class ConnectionAcceptor<Connection: ServedConnection>: @unchecked Sendable {
    public struct Limits {
        var maxConnections: Int
        var maxConnectionsPerAddress: Int
        var outboundHighWaterBytes: Int

        public init(maxConnections: Int, maxConnectionsPerAddress: Int, outboundHighWaterBytes: Int) {
            self.maxConnections = maxConnections
            self.maxConnectionsPerAddress = maxConnectionsPerAddress
            self.outboundHighWaterBytes = outboundHighWaterBytes
        }
    }

    /// The accepting loop: the group's main loop.
    public let loop: EventLoop
    private let group: EventLoopGroup
    private let limits: Limits
    private let logger: Logger
    private let metrics: Metrics?
    private let budget = DescriptorBudget.shared
    /// At most one "out of file descriptors" warning per this long; the rest are counted.
    private static var exhaustionWarningIntervalMilliseconds: Int64 { 10_000 }
    private var lastExhaustionWarningMilliseconds: Int64?
    private var exhaustionsSinceWarning = 0
    /// Wraps each accepted socket (TLS); nil means plain TCP. Set before `listen`.
    public var makeTransport: (@Sendable (Socket) throws -> Transport)?
    private let makeConnection: (Channel) -> Connection
    /// Written (in plain TCP only) to a socket refused for a limit, before it is closed.
    private let refusal: [UInt8]

    private var listener: AcceptingListener<Connection>?  // main loop
    public private(set) var state: ServerState = .idle  // main loop
    private var drainCompletion: (() -> Void)?  // main loop
    /// One per loop of the group, in the group's order; each touched on its own loop only.
    private let shards: [LoopShard<Connection>]
    /// The listener's retry and the shards' ticks, from `listen` until stopped. They keep the
    /// acceptor and its shards alive while it serves (its listener holds it unowned); a weak
    /// reference instead would give both a side table that every retain on the accept path pays for.
    private var timers: [RepeatingTimerHandle] = []  // main loop

    /// Admitted connections (handed to a loop, perhaps not yet set up there) and their count
    /// per client address, for every loop at once.
    private let admissionLock = Lock()
    private var admittedCount = 0
    private var admittedPerAddress: [String: Int] = [:]

    public init(
        group: EventLoopGroup, limits: Limits, logger: Logger, metrics: Metrics?, refusal: [UInt8],
        makeConnection: @escaping (Channel) -> Connection
    ) {
        self.group = group
        self.loop = group.main
        self.limits = limits
        self.logger = logger
        self.metrics = metrics
        self.refusal = refusal
        self.makeConnection = makeConnection
        shards = group.loops.map { LoopShard(loop: $0) }
    }

    /// Open connections on every loop. Safe from any thread.
    public var connectionCount: Int {
        admissionLock.lock()
        defer { admissionLock.unlock() }
        return admittedCount
    }

    /// Requests in flight: exact for the calling loop's connections, as of the last tick (100 ms)
    /// for other loops'. Safe from any thread.
    public var inflightCount: Int { shards.reduce(0) { $0 + $1.inflightCount } }

    /// Binds and starts accepting; returns the bound address (the real port when 0 was asked).
    public func listen(on endpoint: Endpoint) throws -> SocketAddress {
        precondition(state == .idle, "listen called in state \(state)")
        guard let address = try SocketAddress.resolve(host: endpoint.host, port: endpoint.port).first else {
            throw SystemError(call: "resolve(\(endpoint))", errno: ENOENT)
        }
        let socket = try Socket.listen(on: address)
        let listener = AcceptingListener(socket: socket, acceptor: self)
        do {
            try loop.register(socket.fd, readable: true, writable: false, handler: listener)
        } catch {
            listener.close()
            throw error
        }
        self.listener = listener
        state = .listening
        if let shortfall = budget.declare(maxConnections: limits.maxConnections) {
            logger.warning("connection limits exceed the file descriptor limit; connections capped", [
                "net.max_connections_configured": .int(Int64(shortfall.configuredConnections)),
                "net.max_connections": .int(Int64(shortfall.allowedConnections)),
                "fd.soft_limit": .int(Int64(shortfall.softLimit)), "fd.hard_limit": .int(Int64(shortfall.hardLimit)),
            ])
        }
        timers.append(loop.scheduleRepeating(everyMilliseconds: 100) { [self] in self.listener?.resume() })
        for shard in shards {
            timers.append(shard.loop.scheduleRepeating(everyMilliseconds: 100) { shard.tick() })
        }
        return socket.localAddress ?? address
    }

    /// Main loop: admits `socket` (or refuses it) and hands it to the next loop.
    func accepted(_ socket: Socket, peer: SocketAddress) {
        guard state == .listening, admit(address: peer.host) else {
            refuse(socket)
            return
        }
        let next = group.nextLoop()
        let shard = shards.first { $0.loop === next }!
        if shard.loop === loop {
            setUp(socket, peer: peer, on: shard)
        } else {
            shard.loop.execute { self.setUp(socket, peer: peer, on: shard) }
        }
    }

    /// Takes a place for one connection from `address`, or says there is none. Any thread.
    private func admit(address: String) -> Bool {
        admissionLock.lock()
        defer { admissionLock.unlock() }
        let fromAddress = admittedPerAddress[address] ?? 0
        guard admittedCount < limits.maxConnections, fromAddress < limits.maxConnectionsPerAddress, budget.acquire() else { return false }
        admittedCount += 1
        admittedPerAddress[address] = fromAddress + 1
        return true
    }

    /// Gives an admitted connection's place back; true when it was the last one. Any thread.
    private func release(address: String) -> Bool {
        admissionLock.lock()
        defer { admissionLock.unlock() }
        budget.release()
        admittedCount -= 1
        precondition(admittedCount >= 0, "a connection released twice")
        if let count = admittedPerAddress[address] { admittedPerAddress[address] = count > 1 ? count - 1 : nil }
        return admittedCount == 0
    }

    /// On the shard's loop: wraps, registers and records the connection. A drain that began after
    /// the hand-off reaches this loop after this task (tasks run in order), so it sees the connection.
    private func setUp(_ socket: Socket, peer: SocketAddress, on shard: LoopShard<Connection>) {
        let transport: Transport?
        do {
            transport = try makeTransport?(socket)
        } catch {
            logger.warning("cannot wrap connection", ["net.peer": .string(peer.description), "error": .string(String(describing: error))])
            socket.close()
            released(address: peer.host)
            return
        }
        let channel = Channel(loop: shard.loop, socket: socket, peer: peer, transport: transport, highWaterBytes: limits.outboundHighWaterBytes)
        let connection = makeConnection(channel)
        do {
            try channel.activate()
            shard.connections[socket.fd] = connection
        } catch {
            channel.delegate = nil
            transport?.close()
            socket.close()
            released(address: peer.host)
        }
    }

    /// The `overloaded` refusal, then close. Plain text even where TLS is expected: the peer sees a clean close either way.
    func refuse(_ socket: Socket) {
        metrics?.increment("net.connections_refused")
        if makeTransport == nil { refusal.withUnsafeBytes { _ = try? socket.write($0) } }
        socket.close()
    }

    /// `accept` failed for want of descriptors: counted, and said at most once per interval.
    func descriptorsExhausted() {
        metrics?.increment("net.accept_out_of_descriptors")
        exhaustionsSinceWarning += 1
        let now = MonotonicClock.nowMilliseconds()
        if let last = lastExhaustionWarningMilliseconds, now - last < Self.exhaustionWarningIntervalMilliseconds { return }
        logger.warning("out of file descriptors; refusing new connections", [
            "net.accept_failures": .int(Int64(exhaustionsSinceWarning)), "net.connections": .int(Int64(connectionCount)),
        ])
        lastExhaustionWarningMilliseconds = now
        exhaustionsSinceWarning = 0
    }

    /// Called by a connection, on its loop, when its channel has closed.
    public func connectionClosed(_ connection: Connection) {
        let channel = connection.channel
        guard let shard = shards.first(where: { $0.loop === channel.loop }),
            shard.connections.removeValue(forKey: channel.socket.fd) != nil
        else { return }
        released(address: channel.peer?.host ?? "")
    }

    /// After a place is given back: a listener paused for want of a descriptor may accept again,
    /// and a drain may be done. Both on the main loop.
    private func released(address: String) {
        let wasLast = release(address: address)
        let main = loop
        let afterRelease: @Sendable () -> Void = { [self] in
            listener?.resume()
            if wasLast { finishDrainIfDone() }
        }
        if main.isInLoopThread { afterRelease() } else { main.execute(afterRelease) }
    }

    /// Main loop. Stops accepting, lets in-flight requests finish and their answers go out on
    /// every loop, closes every connection, then calls `completion` (on the main loop).
    public func drain(completion: @escaping () -> Void) {
        guard state == .listening else {
            completion()
            return
        }
        state = .draining
        drainCompletion = completion
        if let listener {
            loop.unregister(listener.socket.fd)
            listener.close()
            self.listener = nil
            budget.withdraw(maxConnections: limits.maxConnections)
        }
        for shard in shards { shard.onLoop { $0.drain() } }
        finishDrainIfDone()
    }

    /// After the drain deadline: close whatever is left, on every loop.
    public func forceClose() {
        for shard in shards { shard.onLoop { $0.closeAll() } }
        finishDrainIfDone()
    }

    private func finishDrainIfDone() {
        guard state == .draining, connectionCount == 0, let completion = drainCompletion else { return }
        state = .stopped
        for timer in timers { timer.cancel() }
        timers.removeAll()
        drainCompletion = nil
        completion()
    }
}

/// The connections of one acceptor on one loop, touched on that loop only (except the
/// in-flight snapshot, which the tick publishes under a lock for other threads).
final class LoopShard<Connection: ServedConnection>: @unchecked Sendable {
    let loop: EventLoop
    var connections: [Int32: Connection] = [:]
    private let snapshotLock = Lock()
    private var inflightSnapshot = 0

    init(loop: EventLoop) { self.loop = loop }

    /// Runs `body` on this shard's loop: now when already there, else queued.
    func onLoop(_ body: @escaping @Sendable (LoopShard) -> Void) {
        if loop.isInLoopThread { body(self) } else { loop.execute { body(self) } }
    }

    var inflightCount: Int {
        if loop.isInLoopThread { return connections.values.reduce(0) { $0 + $1.inflightCount } }
        snapshotLock.lock()
        defer { snapshotLock.unlock() }
        return inflightSnapshot
    }

    func tick() {
        let now = MonotonicClock.nowMilliseconds()
        var inflight = 0
        for connection in Array(connections.values) {
            connection.checkTimeouts(nowMilliseconds: now)
            inflight += connection.inflightCount
        }
        snapshotLock.lock()
        inflightSnapshot = inflight
        snapshotLock.unlock()
    }

    func drain() {
        for connection in Array(connections.values) { connection.drain() }
    }

    func closeAll() {
        for connection in Array(connections.values) { connection.channel.close() }
    }
}
