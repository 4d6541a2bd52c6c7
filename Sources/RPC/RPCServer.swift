import FoundationEssentials
import LineProtocol
import Platform
import Runtime
import Secrets

/// A line-protocol JSON-RPC server on a group of event loops: accepts connections up to the limit
/// on the main loop, runs an `RPCConnection` on each, spread over the loops, and drives their
/// timers. Lifecycle:
/// `idle -> listening -> draining -> stopped`; other transitions are programmer errors.
public final class RPCServer: @unchecked Sendable {
    public typealias State = ServerState

    /// The main loop: the listening socket and the drain run there.
    public let loop: EventLoop
    public let group: EventLoopGroup
    public let limits: ServerLimits
    let dispatcher: RPCDispatcher
    let logger: Logger
    /// Internal services believe `meta.client` / `meta.request_id` from their callers;
    /// the public gateway must not, or a client could pick its own rate-limit identity.
    private let trustsCallerMeta: Bool
    /// What every request's context takes from its loop's copy (see `LoopLocal`): the logger,
    /// and the prefix of the ids this server issues (a string too long to be stored inline).
    private let requestScopes: LoopLocal<RequestScope>

    private final class RequestScope: Sendable {
        let logger: LoggerReference
        let requestIDPrefix: String

        init(logger: Logger, requestIDPrefix: String) {
            self.logger = LoggerReference(logger)
            // A string of its own, not a copy sharing the original's storage.
            self.requestIDPrefix = String(decoding: Array(requestIDPrefix.utf8), as: UTF8.self)
        }
    }
    /// Numbers the connections; each numbers its own requests, so ids need no lock per request.
    private var connectionsNumbered: UInt64 = 0
    private let counterLock = Lock()

    private var acceptor: ConnectionAcceptor<RPCConnection>!
    /// Wraps each accepted socket (for example in TLS). Set before `listen`; nil means plain TCP.
    public var makeTransport: (@Sendable (Socket) throws -> Transport)? {
        get { acceptor.makeTransport }
        set { acceptor.makeTransport = newValue }
    }
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
        guard let given = request.meta?.token else { return false }
        return constantTimeEquals(Array(given.utf8), required)
    }
    public var state: ServerState { acceptor.state }

    /// A server whose connections all live on `loop`.
    public convenience init(
        loop: EventLoop, limits: ServerLimits, dispatcher: RPCDispatcher, logger: Logger, replicaID: String, trustsCallerMeta: Bool,
        metrics: Metrics? = nil
    ) {
        self.init(
            group: EventLoopGroup(loop: loop), limits: limits, dispatcher: dispatcher, logger: logger, replicaID: replicaID,
            trustsCallerMeta: trustsCallerMeta, metrics: metrics)
    }

    /// `metrics` receives the connection counters (`net.connections_refused`, `net.accept_out_of_descriptors`).
    public init(
        group: EventLoopGroup, limits: ServerLimits, dispatcher: RPCDispatcher, logger: Logger, replicaID: String, trustsCallerMeta: Bool,
        metrics: Metrics? = nil
    ) {
        self.group = group
        self.loop = group.main
        self.limits = limits
        self.dispatcher = dispatcher
        self.logger = logger
        self.trustsCallerMeta = trustsCallerMeta
        let requestIDPrefix = "\(replicaID)-\(Hex8.random())-"
        requestScopes = LoopLocal { RequestScope(logger: logger, requestIDPrefix: requestIDPrefix) }
        var refusal = RPCResponse(id: .null, error: RPCError(.overloaded, "too many connections")).encoded()
        refusal.append(UInt8(ascii: "\n"))
        acceptor = ConnectionAcceptor(
            group: group,
            limits: .init(
                maxConnections: limits.maxConnections, maxConnectionsPerAddress: limits.maxConnectionsPerAddress,
                outboundHighWaterBytes: limits.outboundHighWaterBytes),
            logger: logger, metrics: metrics, refusal: refusal
        ) { [unowned self] channel in
            let connection = RPCConnection(channel: channel, server: self, number: nextConnectionNumber())
            channel.delegate = connection
            return connection
        }
    }

    /// Binds and starts accepting. Call before the loops run, or on the main loop.
    /// Returns the bound address (with the real port when 0 was asked for).
    @discardableResult
    public func listen(on endpoint: Endpoint) throws -> SocketAddress { try acceptor.listen(on: endpoint) }

    public var connectionCount: Int { acceptor.connectionCount }
    public var inflightCount: Int { acceptor.inflightCount }

    func connectionClosed(_ connection: RPCConnection) { acceptor.connectionClosed(connection) }

    /// `peerHost`: the connection's peer address as text, worked out once per connection.
    /// `issued`: the id to use unless a trusted caller gave one (the connection's next number).
    func makeContext(for request: RPCRequest, peerHost: String?, issued: RequestID, deadlineMilliseconds: Int64) -> CallContext {
        var client = peerHost
        var requestID: RequestID?
        var deadline = deadlineMilliseconds
        if trustsCallerMeta, let meta = request.meta {
            if let vouched = meta.client { client = vouched }
            requestID = meta.requestID
            // A caller that stops waiting sooner than our own timeout bounds the work too.
            if let budget = meta.budgetMilliseconds, budget >= 0 {
                deadline = min(deadline, MonotonicClock.nowMilliseconds() + budget)
            }
        }
        let scope = requestScopes.current
        let id = requestID ?? issued
        return CallContext(method: request.method, id: id, client: client, serviceLogger: scope.logger, deadlineMilliseconds: deadline)
    }

    /// The issuer of a connection's request ids: this loop's prefix and the connection's number.
    /// Call on the connection's loop.
    func requestIDIssuer(connection: UInt64, peerHost: String?) -> RequestIDIssuer {
        RequestIDIssuer(prefix: requestScopes.current.requestIDPrefix, connection: connection, client: peerHost)
    }

    private func nextConnectionNumber() -> UInt64 {
        counterLock.lock()
        defer { counterLock.unlock() }
        connectionsNumbered &+= 1
        return connectionsNumbered
    }

    // MARK: Shutdown

    /// Stops accepting, lets in-flight requests finish and their answers go out on every loop,
    /// closes every connection, then calls `completion` on the main loop. Main loop only.
    public func drain(completion: @escaping () -> Void) { acceptor.drain(completion: completion) }

    /// After the drain deadline: close whatever is left.
    public func forceClose() { acceptor.forceClose() }
}
