import LineProtocol
import ServiceKit

/// Routes `service.method` to a replica of that service over a shared, multiplexed client.
/// The gateway's own methods answer here; policy is decided before anything is forwarded.
public final class Forwarder: RPCDispatcher, @unchecked Sendable {
    private let clients: [String: RPCClient]
    private let metrics: Metrics
    private let requestTimeoutMilliseconds: Int64

    public init(clients: [String: RPCClient], metrics: Metrics, requestTimeoutMilliseconds: Int64) {
        self.clients = clients
        self.metrics = metrics
        self.requestTimeoutMilliseconds = requestTimeoutMilliseconds
    }

    public func dispatch(_ request: RPCRequest, context: CallContext, reply: @escaping @Sendable (Result<JSON, RPCError>) -> Void) {
        let started = MonotonicClock.nowMicroseconds()
        let metrics = self.metrics
        let method = request.method
        let finish: @Sendable (Result<JSON, RPCError>) -> Void = { outcome in
            let elapsed = MonotonicClock.nowMicroseconds() - started
            metrics.record(method: method, microseconds: elapsed, errorReason: outcome.errorReason)
            reply(outcome)
        }
        if method == "gateway.ping" {
            finish(.success(["pong": true]))
            return
        }
        if method == "gateway.metrics" {
            finish(.success(metrics.snapshot()))
            return
        }
        guard let service = method.split(separator: ".", maxSplits: 1).first.map(String.init),
            let client = clients[service], method.contains(".")
        else {
            metrics.record(method: "unknown", microseconds: 0, errorReason: Reason.methodNotFound.rawValue)
            reply(.failure(.methodNotFound(method)))
            return
        }
        client.call(method, params: request.params, meta: context.forwardedMeta, timeoutMilliseconds: requestTimeoutMilliseconds) { outcome, _ in
            finish(outcome)
        }
    }
}

extension Result where Failure == RPCError {
    var errorReason: String? {
        if case .failure(let error) = self { return error.reason ?? "error" }
        return nil
    }
}
