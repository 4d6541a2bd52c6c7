import Glibc

/// The lifecycle every server shares: `idle -> listening -> draining -> stopped`.
public enum ServerState: Sendable { case idle, listening, draining, stopped }

/// What a server runs on each accepted socket (an `RPCConnection`, an `HTTPConnection`).
/// Loop thread only.
protocol ServedConnection: AnyObject {
    var channel: Channel { get }
    var inflightCount: Int { get }
    func checkTimeouts(nowMilliseconds: Int64)
    /// Finish what is in flight, then close.
    func drain()
}

/// The part of a TCP server that does not depend on its protocol: the listening socket, the
/// table of open connections with their count per client address, the limits checked at
/// accept (its own and the process's descriptor budget), a 100 ms tick for each connection's
/// timers, and the drain state machine. Impossible transitions crash. Loop thread only (except `init`).
final class ConnectionAcceptor<Connection: ServedConnection> {
    struct Limits {
        var maxConnections: Int
        var maxConnectionsPerAddress: Int
        var outboundHighWaterBytes: Int
    }

    let loop: EventLoop
    private let limits: Limits
    private let logger: Logger
    private let metrics: Metrics?
    private let budget = DescriptorBudget.shared
    /// At most one "out of file descriptors" warning per this long; the rest are counted.
    private static var exhaustionWarningIntervalMilliseconds: Int64 { 10_000 }
    private var lastExhaustionWarningMilliseconds: Int64?
    private var exhaustionsSinceWarning = 0
    /// Wraps each accepted socket (TLS); nil means plain TCP. Set before `listen`.
    var makeTransport: (@Sendable (Socket) throws -> Transport)?
    private let makeConnection: (Channel) -> Connection
    /// Written (in plain TCP only) to a socket refused for a limit, before it is closed.
    private let refusal: [UInt8]

    private var listener: AcceptingListener<Connection>?
    private var connections: [Int32: Connection] = [:]
    private var connectionsPerAddress: [String: Int] = [:]
    private(set) var state: ServerState = .idle
    private var drainCompletion: (() -> Void)?

    init(loop: EventLoop, limits: Limits, logger: Logger, metrics: Metrics?, refusal: [UInt8], makeConnection: @escaping (Channel) -> Connection) {
        self.loop = loop
        self.limits = limits
        self.logger = logger
        self.metrics = metrics
        self.refusal = refusal
        self.makeConnection = makeConnection
    }

    var connectionCount: Int { connections.count }
    var inflightCount: Int { connections.values.reduce(0) { $0 + $1.inflightCount } }

    /// Binds and starts accepting; returns the bound address (the real port when 0 was asked).
    func listen(on endpoint: Endpoint) throws -> SocketAddress {
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
        loop.scheduleRepeating(everyMilliseconds: 100) { [weak self] in self?.tick() }
        return socket.localAddress ?? address
    }

    func accepted(_ socket: Socket, peer: SocketAddress) {
        let address = peer.host
        let fromAddress = connectionsPerAddress[address] ?? 0
        guard state == .listening, connections.count < limits.maxConnections, fromAddress < limits.maxConnectionsPerAddress,
            budget.acquire()
        else {
            refuse(socket)
            return
        }
        let transport: Transport?
        do {
            transport = try makeTransport?(socket)
        } catch {
            logger.warning("cannot wrap connection", ["net.peer": .string(peer.description), "error": .string(String(describing: error))])
            socket.close()
            budget.release()
            return
        }
        let channel = Channel(loop: loop, socket: socket, peer: peer, transport: transport, highWaterBytes: limits.outboundHighWaterBytes)
        let connection = makeConnection(channel)
        do {
            try channel.activate()
            connections[socket.fd] = connection
            connectionsPerAddress[address] = fromAddress + 1
        } catch {
            transport?.close()
            socket.close()
            budget.release()
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
            "net.accept_failures": .int(Int64(exhaustionsSinceWarning)), "net.connections": .int(Int64(connections.count)),
        ])
        lastExhaustionWarningMilliseconds = now
        exhaustionsSinceWarning = 0
    }

    /// Called by a connection when its channel has closed.
    func connectionClosed(_ connection: Connection) {
        guard connections.removeValue(forKey: connection.channel.socket.fd) != nil else { return }
        budget.release()
        // A descriptor is free again: a listener paused for want of one may accept.
        listener?.resume()
        if let address = connection.channel.peer?.host, let count = connectionsPerAddress[address] {
            connectionsPerAddress[address] = count > 1 ? count - 1 : nil
        }
        finishDrainIfDone()
    }

    private func tick() {
        let now = MonotonicClock.nowMilliseconds()
        listener?.resume()
        for connection in Array(connections.values) { connection.checkTimeouts(nowMilliseconds: now) }
    }

    /// Stops accepting, lets in-flight requests finish and their answers go out, closes every
    /// connection, then calls `completion`.
    func drain(completion: @escaping () -> Void) {
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
        for connection in Array(connections.values) { connection.drain() }
        finishDrainIfDone()
    }

    /// After the drain deadline: close whatever is left.
    func forceClose() {
        for connection in Array(connections.values) { connection.channel.close() }
        finishDrainIfDone()
    }

    private func finishDrainIfDone() {
        guard state == .draining, connections.isEmpty, let completion = drainCompletion else { return }
        state = .stopped
        drainCompletion = nil
        completion()
    }
}
