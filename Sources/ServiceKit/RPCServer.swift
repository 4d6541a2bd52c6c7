import Foundation
import LineProtocol
import Secrets

/// A line-protocol JSON-RPC server on one event loop: accepts connections up to the limit,
/// runs an `RPCConnection` on each, and drives their timers. Lifecycle:
/// `idle -> listening -> draining -> stopped`; other transitions are programmer errors.
public final class RPCServer: @unchecked Sendable {
    public enum State: Sendable { case idle, listening, draining, stopped }

    public let loop: EventLoop
    public let limits: ServerLimits
    let dispatcher: RPCDispatcher
    let logger: Logger
    /// Internal services believe `meta.client` / `meta.request_id` from their callers;
    /// the public gateway must not, or a client could pick its own rate-limit identity.
    private let trustsCallerMeta: Bool
    private let requestIDPrefix: String
    private var requestCounter: UInt64 = 0
    private let counterLock = NSLock()

    private var listener: Listener?
    private var connections: [Int32: RPCConnection] = [:]
    /// Open connections per peer host, for `limits.maxConnectionsPerAddress`.
    private var connectionsPerHost: [String: Int] = [:]
    /// Wraps each accepted socket (for example in TLS). Set before `listen`; nil means plain TCP.
    public var makeTransport: (@Sendable (Socket) throws -> Transport)?
    /// When set (`--service-token`), requests whose `meta.token` differs are refused with
    /// `unauthenticated` before dispatch. Never set on the public gateway listener.
    public var requiredServiceToken: String? {
        didSet { requiredServiceTokenBytes = requiredServiceToken.map { Array($0.utf8) } }
    }
    private var requiredServiceTokenBytes: [UInt8]?

    /// False when a service token is required and `request` does not carry it (constant-time compare).
    /// `ping` and `health` stay open so orchestrator health checks work without the secret.
    func carriesServiceToken(_ request: RPCRequest) -> Bool {
        guard let required = requiredServiceTokenBytes else { return true }
        if request.method.hasSuffix(".ping") || request.method.hasSuffix(".health") { return true }
        guard let given = request.meta?["token"]?.stringValue else { return false }
        return constantTimeEquals(Array(given.utf8), required)
    }
    public private(set) var state: State = .idle
    private var drainCompletion: (() -> Void)?

    public init(loop: EventLoop, limits: ServerLimits, dispatcher: RPCDispatcher, logger: Logger, replicaID: String, trustsCallerMeta: Bool) {
        self.loop = loop
        self.limits = limits
        self.dispatcher = dispatcher
        self.logger = logger
        self.trustsCallerMeta = trustsCallerMeta
        self.requestIDPrefix = "\(replicaID)-\(Hex8.random())-"
    }

    /// Binds and starts accepting. Call before `loop.run()` or on the loop thread.
    /// Returns the bound address (with the real port when 0 was asked for).
    @discardableResult
    public func listen(on endpoint: Endpoint) throws -> SocketAddress {
        precondition(state == .idle, "listen called in state \(state)")
        guard let address = try SocketAddress.resolve(host: endpoint.host, port: endpoint.port).first else {
            throw SystemError(call: "resolve(\(endpoint))", errno: ENOENT)
        }
        let socket = try Socket.listen(on: address)
        let listener = Listener(socket: socket, server: self)
        try loop.register(socket.fd, readable: true, writable: false, handler: listener)
        self.listener = listener
        state = .listening
        loop.scheduleRepeating(everyMilliseconds: 100) { [weak self] in self?.tick() }
        return socket.localAddress ?? address
    }

    public var connectionCount: Int { connections.count }
    public var inflightCount: Int { connections.values.reduce(0) { $0 + $1.inflightCount } }

    func accepted(_ socket: Socket, peer: SocketAddress) {
        let host = peer.host
        let perHost = connectionsPerHost[host] ?? 0
        guard state == .listening, connections.count < limits.maxConnections, perHost < limits.maxConnectionsPerAddress else {
            let error = RPCError(.overloaded, "too many connections")
            var line = RPCResponse(id: .null, error: error).encoded()
            line.append(UInt8(ascii: "\n"))
            // Plain text even on a TLS listener: the peer gets a clean close either way.
            if makeTransport == nil { line.withUnsafeBytes { _ = try? socket.write($0) } }
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
        let connection = RPCConnection(channel: channel, server: self)
        channel.delegate = connection
        do {
            try channel.activate()
            connections[socket.fd] = connection
            connectionsPerHost[host] = perHost + 1
        } catch {
            socket.close()
        }
    }

    func connectionClosed(_ connection: RPCConnection) {
        connections.removeValue(forKey: connection.channel.socket.fd)
        if let host = connection.channel.peer?.host, let count = connectionsPerHost[host] {
            connectionsPerHost[host] = count > 1 ? count - 1 : nil
        }
        finishDrainIfDone()
    }

    func makeContext(for request: RPCRequest, peer: SocketAddress?, deadlineMilliseconds: Int64) -> CallContext {
        var client = peer?.host
        var requestID: String?
        if trustsCallerMeta, let meta = request.meta {
            if let vouched = meta["client"]?.stringValue { client = vouched }
            requestID = meta["request_id"]?.stringValue
        }
        let id = requestID ?? nextRequestID()
        return CallContext(
            method: request.method, requestID: id, client: client,
            logger: logger.with(["rpc.request_id": .string(id)]), deadlineMilliseconds: deadlineMilliseconds)
    }

    private func nextRequestID() -> String {
        counterLock.lock()
        requestCounter &+= 1
        let value = requestCounter
        counterLock.unlock()
        return requestIDPrefix + String(value)
    }

    private func tick() {
        let now = MonotonicClock.nowMilliseconds()
        for connection in Array(connections.values) { connection.checkTimeouts(nowMilliseconds: now) }
    }

    // MARK: Shutdown

    /// Stops accepting, lets in-flight requests finish and their answers go out, closes
    /// every connection, then calls `completion` on the loop thread. Loop thread only.
    public func drain(completion: @escaping () -> Void) {
        guard state == .listening else {
            completion()
            return
        }
        state = .draining
        drainCompletion = completion
        if let listener {
            loop.unregister(listener.socket.fd)
            listener.socket.close()
            self.listener = nil
        }
        for connection in Array(connections.values) { connection.drain() }
        finishDrainIfDone()
    }

    /// After the drain deadline: close whatever is left.
    public func forceClose() {
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

/// The listening socket: accepts in bounded bursts.
private final class Listener: EventHandler {
    let socket: Socket
    unowned let server: RPCServer

    init(socket: Socket, server: RPCServer) {
        self.socket = socket
        self.server = server
    }

    func handle(_ readiness: Readiness) {
        for _ in 0..<64 {
            guard case .done(let (connection, peer))? = try? socket.accept() else { return }
            server.accepted(connection, peer: peer)
        }
    }
}

enum Hex8 {
    /// Four random bytes as hex: distinguishes request ids across restarts (not a secret).
    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(UInt32.random(in: .min ... .max, using: &generator), radix: 16)
    }
}
