import Foundation
@testable import Gateway
@testable import HTTP
import LineProtocol
@testable import Platform
@testable import RPC
@testable import Runtime
import ServerTestSupport
import TestSupport

/// Stands in for the gateway's dispatcher: a few methods, and a record of what it was called with.
final class FakeGatewayDispatcher: RPCDispatcher, @unchecked Sendable {
    private let lock = NSLock()
    private var calls: [(RPCRequest, CallContext)] = []
    let metrics = Metrics()

    var recorded: [(request: RPCRequest, context: CallContext)] {
        lock.lock()
        defer { lock.unlock() }
        return calls.map { ($0.0, $0.1) }
    }

    func dispatch(_ request: RPCRequest, context: CallContext, reply: @escaping @Sendable (Result<JSON, RPCError>) -> Void) {
        lock.lock()
        calls.append((request, context))
        lock.unlock()
        let params = request.params?.objectValue ?? [:]
        let metrics = self.metrics
        let finish: @Sendable (Result<JSON, RPCError>) -> Void = { outcome in
            let reason: String? = if case .failure(let error) = outcome { error.reasonText } else { nil }
            metrics.record(metrics.slot(for: request.method), microseconds: 120, errorReason: reason)
            reply(outcome)
        }
        switch request.method {
        case "gateway.ping":
            finish(.success(["pong": true]))
        case "gateway.health":
            finish(.success(["status": "ok", "services": ["identity": ["up": 1, "total": 1]]]))
        case "t.echo":
            finish(.success(request.params ?? .null))
        case "t.slow":
            let milliseconds = Int(params["ms"]?.intValue ?? 100)
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
                finish(.success(["slept_ms": .int(Int64(milliseconds))]))
            }
        case "t.fail":
            let reason = Reason(rawValue: params["reason"]?.stringValue ?? "") ?? .internal
            let extra: [String: JSON] = reason == .rateLimited || reason == .locked ? ["retry_after": 7] : [:]
            finish(.failure(RPCError(reason, "failed on purpose", extra: extra)))
        case "identity.whoami":
            guard let session = params["session"]?.stringValue else {
                return finish(.failure(RPCError(.unauthenticated, "a valid session is required")))
            }
            finish(.success(["session": .string(session)]))
        case "reset.request":
            guard let email = params["email"]?.stringValue, email.contains("@") else {
                return finish(.failure(.invalidParams("email must be an e-mail address", field: "email")))
            }
            finish(.success(["ok": true]))
        case "reset.validate":
            if params["token"] == "lkr_good" { return finish(.success(["valid": true, "expires_at": 1])) }
            if params["token"] == "lkr_expired" { return finish(.failure(RPCError(.expired, "this reset link expired"))) }
            finish(.failure(RPCError(.invalidToken, "this reset link is not valid")))
        case "reset.complete":
            if params["token"] != "lkr_good" { return finish(.failure(RPCError(.invalidToken, "this reset link is not valid"))) }
            if params["password"] == "weak" { return finish(.failure(RPCError(.weakPassword, "too weak"))) }
            finish(.success(["ok": true]))
        default:
            finish(.failure(.methodNotFound(request.method)))
        }
    }
}

/// An `HTTPServer` with the gateway door over a fake dispatcher, on 127.0.0.1:0, on its own loop thread.
final class TestHTTPServer: HTTPServerOnLoop, @unchecked Sendable {
    let dispatcher: FakeGatewayDispatcher

    init(limits: HTTPLimits = HTTPLimits(), settings: HTTPGatewayDoor.Settings = HTTPGatewayDoor.Settings(), handler: HTTPHandler? = nil) throws {
        let dispatcher = FakeGatewayDispatcher()
        self.dispatcher = dispatcher
        try super.init(handler: handler ?? HTTPGatewayDoor(dispatcher: dispatcher, settings: settings), limits: limits)
    }
}
