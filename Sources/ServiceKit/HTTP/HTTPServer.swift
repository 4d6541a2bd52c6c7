import Foundation
import LineProtocol

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
    public enum State: Sendable { case idle, listening, draining, stopped }

    public typealias TransportFactory = @Sendable (Socket) throws -> Transport

    public let loop: EventLoop
    public let limits: HTTPLimits
    let handler: HTTPHandler
    let logger: Logger
    private let transportFactory: TransportFactory?
    private let requestIDPrefix: String
    private var requestCounter: UInt64 = 0

    private var listener: HTTPListener?
    private var connections: [Int32: HTTPConnection] = [:]
    private var connectionsPerAddress: [String: Int] = [:]
    public private(set) var state: State = .idle
    private var drainCompletion: (() -> Void)?

    /// `transportFactory` wraps each accepted socket (TLS); nil means plain TCP.
    public init(
        loop: EventLoop, limits: HTTPLimits = HTTPLimits(), handler: HTTPHandler, logger: Logger, replicaID: String,
        transportFactory: TransportFactory? = nil
    ) {
        self.loop = loop
        self.limits = limits
        self.handler = handler
        self.logger = logger
        self.transportFactory = transportFactory
        self.requestIDPrefix = "\(replicaID)-h\(Hex8.random())-"
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
        let listener = HTTPListener(socket: socket, server: self)
        try loop.register(socket.fd, readable: true, writable: false, handler: listener)
        self.listener = listener
        state = .listening
        loop.scheduleRepeating(everyMilliseconds: 100) { [weak self] in self?.tick() }
        return socket.localAddress ?? address
    }

    public var connectionCount: Int { connections.count }
    public var inflightCount: Int { connections.values.reduce(0) { $0 + $1.inflightCount } }

    func accepted(_ socket: Socket, peer: SocketAddress) {
        let address = peer.host
        guard state == .listening, connections.count < limits.maxConnections,
            connectionsPerAddress[address, default: 0] < limits.maxConnectionsPerAddress
        else {
            // Best effort, plain text: a TLS client will just see the connection close.
            if transportFactory == nil {
                let response = HTTPResponse.error(503, reason: "overloaded", "too many connections")
                let bytes = HTTPConnection.serialize(response, keepAlive: false, includeBody: true)
                bytes.withUnsafeBytes { _ = try? socket.write($0) }
            }
            socket.close()
            return
        }
        let transport: Transport?
        do {
            transport = try transportFactory?(socket)
        } catch {
            logger.info("http transport refused a connection", ["net.peer": .string(peer.description)])
            socket.close()
            return
        }
        let channel = Channel(loop: loop, socket: socket, peer: peer, transport: transport, highWaterBytes: limits.outboundHighWaterBytes)
        let connection = HTTPConnection(channel: channel, server: self)
        channel.delegate = connection
        do {
            try channel.activate()
            connections[socket.fd] = connection
            connectionsPerAddress[address, default: 0] += 1
        } catch {
            transport?.close()
            socket.close()
        }
    }

    func connectionClosed(_ connection: HTTPConnection) {
        guard connections.removeValue(forKey: connection.channel.socket.fd) != nil else { return }
        if let address = connection.channel.peer?.host {
            let remaining = connectionsPerAddress[address, default: 1] - 1
            connectionsPerAddress[address] = remaining > 0 ? remaining : nil
        }
        finishDrainIfDone()
    }

    /// Loop thread only.
    func nextRequestID() -> String {
        requestCounter &+= 1
        return requestIDPrefix + String(requestCounter)
    }

    private func tick() {
        let now = MonotonicClock.nowMilliseconds()
        for connection in Array(connections.values) { connection.checkTimeouts(nowMilliseconds: now) }
    }

    // MARK: Shutdown

    /// Stops accepting, lets in-flight requests finish and their responses go out (with
    /// `Connection: close`), closes every connection, then calls `completion` on the loop thread.
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
private final class HTTPListener: EventHandler {
    let socket: Socket
    unowned let server: HTTPServer

    init(socket: Socket, server: HTTPServer) {
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
