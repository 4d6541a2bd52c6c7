import FoundationEssentials
import LineProtocol
import Platform
import Runtime

/// The limits of the HTTP/1.1 server, each named with its unit.
public struct HTTPLimits: Sendable, Equatable {
    public var parser = HTTPParserLimits()
    public var maxConnections = 4096
    /// Open connections from one client address (the TCP peer).
    public var maxConnectionsPerAddress = 256
    /// Pipelined requests handled at once on one connection before reading pauses.
    public var maxPipelinedRequests = 16
    /// A request head must be complete this long after its first byte: 408 then close.
    public var headerTimeoutMilliseconds: Int64 = 10_000
    /// A body must be complete this long after its head: 408 then close.
    public var bodyTimeoutMilliseconds: Int64 = 10_000
    /// A keep-alive connection with nothing to do is closed after this long.
    public var idleTimeoutMilliseconds: Int64 = 60_000
    /// A client that reads none of its responses for this long is cut off.
    public var writeTimeoutMilliseconds: Int64 = 10_000
    /// A handler that has not answered after this long gets a 504 for it.
    public var requestTimeoutMilliseconds: Int64 = 15_000
    public var outboundHighWaterBytes = 1 << 20

    public init() {}
}

/// What a handler may know about a request beyond the request itself.
public struct HTTPRequestContext: Sendable {
    /// The TCP peer (the client, or the proxy in front of it).
    public let peer: SocketAddress?
    public let requestID: String
    public let deadlineMilliseconds: Int64
    public let logger: Logger

    public init(peer: SocketAddress?, requestID: String, deadlineMilliseconds: Int64, logger: Logger) {
        self.peer = peer
        self.requestID = requestID
        self.deadlineMilliseconds = deadlineMilliseconds
        self.logger = logger
    }
}

/// Turns a request into a response, on any thread. `respond` must be called once; later calls
/// and calls after the request timed out are ignored. The server owns framing, ordering,
/// limits, timeouts, `Content-Length`, `Date`, `Server` and `Connection`.
public protocol HTTPHandler: AnyObject, Sendable {
    func handle(_ request: HTTPRequest, context: HTTPRequestContext, respond: @escaping @Sendable (HTTPResponse) -> Void)
}

/// An HTTP/1.1 server on one event loop: accepts up to the connection limit, runs an
/// `HTTPConnection` on each, and drives their timers. Lifecycle, as `RPCServer`:
/// `idle -> listening -> draining -> stopped`; other transitions are programmer errors.
public final class HTTPServer: @unchecked Sendable {
    public typealias State = ServerState

    public typealias TransportFactory = @Sendable (Socket) throws -> Transport

    public let loop: EventLoop
    public let limits: HTTPLimits
    let handler: HTTPHandler
    let logger: Logger
    private let requestIDPrefix: String
    private var requestCounter: UInt64 = 0
    private var acceptor: ConnectionAcceptor<HTTPConnection>!

    public var state: ServerState { acceptor.state }

    /// `transportFactory` wraps each accepted socket (TLS); nil means plain TCP. `metrics` receives
    /// the connection counters (`net.connections_refused`, `net.accept_out_of_descriptors`).
    public init(
        loop: EventLoop, limits: HTTPLimits = HTTPLimits(), handler: HTTPHandler, logger: Logger, replicaID: String,
        transportFactory: TransportFactory? = nil, metrics: Metrics? = nil
    ) {
        self.loop = loop
        self.limits = limits
        self.handler = handler
        self.logger = logger
        self.requestIDPrefix = "\(replicaID)-h\(Hex8.random())-"
        let refusal = HTTPConnection.serialize(
            HTTPResponse.error(503, reason: "overloaded", "too many connections"), keepAlive: false, includeBody: true)
        // One loop: its request ids and handlers are confined to it (the line protocol spreads over the group).
        acceptor = ConnectionAcceptor(
            group: EventLoopGroup(loop: loop),
            limits: .init(
                maxConnections: limits.maxConnections, maxConnectionsPerAddress: limits.maxConnectionsPerAddress,
                outboundHighWaterBytes: limits.outboundHighWaterBytes),
            logger: logger, metrics: metrics, refusal: refusal
        ) { [unowned self] channel in
            let connection = HTTPConnection(channel: channel, server: self)
            channel.delegate = connection
            return connection
        }
        acceptor.makeTransport = transportFactory
    }

    /// Binds and starts accepting. Call before `loop.run()` or on the loop thread.
    /// Returns the bound address (with the real port when 0 was asked for).
    @discardableResult
    public func listen(on endpoint: Endpoint) throws -> SocketAddress { try acceptor.listen(on: endpoint) }

    public var connectionCount: Int { acceptor.connectionCount }
    public var inflightCount: Int { acceptor.inflightCount }

    func connectionClosed(_ connection: HTTPConnection) { acceptor.connectionClosed(connection) }

    /// Loop thread only.
    func nextRequestID() -> String {
        requestCounter &+= 1
        return requestIDPrefix + String(requestCounter)
    }

    // MARK: Shutdown

    /// Stops accepting, lets in-flight requests finish and their responses go out (with
    /// `Connection: close`), closes every connection, then calls `completion` on the loop thread.
    public func drain(completion: @escaping () -> Void) { acceptor.drain(completion: completion) }

    /// After the drain deadline: close whatever is left.
    public func forceClose() { acceptor.forceClose() }
}
