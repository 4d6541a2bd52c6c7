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
/// accept, a 100 ms tick for each connection's timers, and the drain state machine. Impossible
/// transitions crash. Loop thread only (except `init`).
final class ConnectionAcceptor<Connection: ServedConnection> {
    struct Limits {
        var maxConnections: Int
        var maxConnectionsPerAddress: Int
        var outboundHighWaterBytes: Int
    }

    let loop: EventLoop
    private let limits: Limits
    private let logger: Logger
    /// Wraps each accepted socket (TLS); nil means plain TCP. Set before `listen`.
    var makeTransport: (@Sendable (Socket) throws -> Transport)?
    private let makeConnection: (Channel) -> Connection
    /// Written (in plain TCP only) to a socket refused for a limit, before it is closed.
    private let refusal: [UInt8]

    private var listenerSocket: Socket?
    private var connections: [Int32: Connection] = [:]
    private var connectionsPerAddress: [String: Int] = [:]
    private(set) var state: ServerState = .idle
    private var drainCompletion: (() -> Void)?

    init(loop: EventLoop, limits: Limits, logger: Logger, refusal: [UInt8], makeConnection: @escaping (Channel) -> Connection) {
        self.loop = loop
        self.limits = limits
        self.logger = logger
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
        try loop.register(socket.fd, readable: true, writable: false, handler: AcceptingListener(socket: socket, acceptor: self))
        listenerSocket = socket
        state = .listening
        loop.scheduleRepeating(everyMilliseconds: 100) { [weak self] in self?.tick() }
        return socket.localAddress ?? address
    }

    fileprivate func accepted(_ socket: Socket, peer: SocketAddress) {
        let address = peer.host
        let fromAddress = connectionsPerAddress[address] ?? 0
        guard state == .listening, connections.count < limits.maxConnections, fromAddress < limits.maxConnectionsPerAddress else {
            // Plain text even where TLS is expected: the peer sees a clean close either way.
            if makeTransport == nil { refusal.withUnsafeBytes { _ = try? socket.write($0) } }
            socket.close()
            return
        }
        let transport: Transport?
        do {
            transport = try makeTransport?(socket)
        } catch {
            logger.warning("cannot wrap connection", ["net.peer": .string(peer.description), "error": .string(String(describing: error))])
            socket.close()
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
        }
    }

    /// Called by a connection when its channel has closed.
    func connectionClosed(_ connection: Connection) {
        guard connections.removeValue(forKey: connection.channel.socket.fd) != nil else { return }
        if let address = connection.channel.peer?.host, let count = connectionsPerAddress[address] {
            connectionsPerAddress[address] = count > 1 ? count - 1 : nil
        }
        finishDrainIfDone()
    }

    private func tick() {
        let now = MonotonicClock.nowMilliseconds()
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
        if let listenerSocket {
            loop.unregister(listenerSocket.fd)
            listenerSocket.close()
            self.listenerSocket = nil
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

/// The listening socket on the loop: accepts in bounded bursts.
private final class AcceptingListener<Connection: ServedConnection>: EventHandler {
    let socket: Socket
    unowned let acceptor: ConnectionAcceptor<Connection>

    init(socket: Socket, acceptor: ConnectionAcceptor<Connection>) {
        self.socket = socket
        self.acceptor = acceptor
    }

    func handle(_ readiness: Readiness) {
        for _ in 0..<64 {
            guard case .done(let (connection, peer))? = try? socket.accept() else { return }
            acceptor.accepted(connection, peer: peer)
        }
    }
}
