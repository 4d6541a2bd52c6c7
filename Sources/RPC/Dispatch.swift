import LineProtocol
import Platform
import Runtime

/// Who is calling and until when: what a handler may know about the request
/// beyond its parameters. Never holds the parameters themselves.
public struct CallContext: Sendable {
    public let method: String
    /// Spelled out on first read: see `RequestID`.
    public var requestID: String { id.description }
    public let id: RequestID
    /// The end client's address: the peer's, or the one the gateway vouched for in `meta`.
    public let client: String?
    /// The service's logger, writing this request's id on every line: derived when a handler
    /// logs, so a request that logs nothing copies no logger carrying its id.
    public var logger: Logger { serviceLogger.logger.with(requestID: id) }
    private let serviceLogger: LoggerReference
    public let deadlineMilliseconds: Int64

    public init(method: String, requestID: String, client: String?, logger: Logger, deadlineMilliseconds: Int64) {
        self.init(method: method, id: RequestID(requestID), client: client, logger: logger, deadlineMilliseconds: deadlineMilliseconds)
    }

    /// `logger` is the service's: the context's own adds `rpc.request_id`.
    public init(method: String, id: RequestID, client: String?, logger: Logger, deadlineMilliseconds: Int64) {
        self.init(method: method, id: id, client: client, serviceLogger: LoggerReference(logger), deadlineMilliseconds: deadlineMilliseconds)
    }

    init(method: String, id: RequestID, client: String?, serviceLogger: LoggerReference, deadlineMilliseconds: Int64) {
        self.method = method
        self.id = id
        self.client = client
        self.serviceLogger = serviceLogger
        self.deadlineMilliseconds = deadlineMilliseconds
    }

    /// Time left before the caller gives up, for bounding calls to other services.
    public var remainingMilliseconds: Int64 { max(0, deadlineMilliseconds - MonotonicClock.nowMilliseconds()) }

    /// `meta` to pass along when this handler calls another service.
    public var forwardedMeta: RequestMeta { RequestMeta(client: client, requestID: id) }
}

/// A logger behind one reference: a context made per request retains this once, instead of the
/// logger's metadata and sink, which every loop shares (their counts would pass between cores).
final class LoggerReference: Sendable {
    let logger: Logger

    init(_ logger: Logger) { self.logger = logger }
}

/// Turns a request into an answer, on whatever thread it likes. The server owns framing,
/// ids, batches, limits and timeouts; the dispatcher owns what a method means.
public protocol RPCDispatcher: AnyObject, Sendable {
    func dispatch(_ request: RPCRequest, context: CallContext, reply: @escaping @Sendable (Result<JSON, RPCError>) -> Void)

    /// A line the server refused before any method (not JSON, not a request, too long), with its
    /// error's reason, from `client`: counted like a request. Returns an error to answer instead
    /// (`rate_limited`), or nil to answer the refusal.
    func refusedLine(reason: String, client: String?) -> RPCError?

    /// `dispatch`, answered as an `RPCReply`: what the line server calls. A dispatcher that can
    /// pass a result on as the bytes it received (the gateway) implements it; others get the default.
    func dispatch(_ request: RPCRequest, context: CallContext, replying reply: @escaping @Sendable (RPCReply) -> Void)
}

extension RPCDispatcher {
    public func dispatch(_ request: RPCRequest, context: CallContext, replying reply: @escaping @Sendable (RPCReply) -> Void) {
        dispatch(request, context: context) { reply(.outcome($0)) }
    }

    /// Services trust their callers: nothing counted, the refusal is answered.
    public func refusedLine(reason: String, client: String?) -> RPCError? { nil }
}
