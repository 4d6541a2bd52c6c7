import LineProtocol
import RPC

/// Every way a verification call can fail, mapped to the wire in one place (`rpcError`).
/// Messages never carry a code, a payload or a number.
public enum VerificationError: Error, Sendable, Equatable, RPCErrorConvertible {
    case invalidParams(String, field: String?, rule: String? = nil)
    case concurrentVerification(requestID: String)
    case rateLimited(retryAfterSeconds: Int64, scope: String)
    case invalidCode(attemptsLeft: Int)
    case tooManyAttempts
    case expired
    case notFound
    case conflict(String, status: String)
    case unavailable(String)

    public var rpcError: RPCError {
        switch self {
        case .invalidParams(let message, let field, let rule):
            var extra: [String: JSON] = [:]
            if let field { extra["field"] = .string(field) }
            if let rule { extra["rule"] = .string(rule) }
            return RPCError(.invalidParams, message, extra: extra)
        case .concurrentVerification(let requestID):
            return RPCError(
                .concurrentVerification, "a verification for this destination is already in progress",
                extra: ["request_id": .string(requestID)])
        case .rateLimited(let retryAfter, let scope):
            return RPCError(.rateLimited, "too many codes sent; try again later", extra: ["retry_after": .int(retryAfter), "scope": .string(scope)])
        case .invalidCode(let attemptsLeft):
            return RPCError(.invalidCode, "the code is not valid", extra: ["attempts_left": .int(Int64(attemptsLeft))])
        case .tooManyAttempts:
            return RPCError(.tooManyAttempts, "too many wrong codes; this verification has failed, start a new one")
        case .expired:
            return RPCError(.expired, "the code has expired")
        case .notFound:
            return RPCError(.notFound, "no such verification request")
        case .conflict(let message, let status):
            return RPCError(.conflict, message, extra: ["status": .string(status)])
        case .unavailable(let message):
            return RPCError(.unavailable, message)
        }
    }
}
