/// Stable error reasons, sent as `error.data.reason`. The one table mapping each reason to its
/// JSON-RPC error code is `code` below.
public enum Reason: String, Sendable, CaseIterable {
    // Application reasons (protocol/README.md, "Answers and errors").
    case invalidParams = "invalid_params"
    case unauthenticated
    case stepUpRequired = "step_up_required"
    case invalidCredentials = "invalid_credentials"
    case locked
    case rateLimited = "rate_limited"
    case invalidCode = "invalid_code"
    case tooManyAttempts = "too_many_attempts"
    case expired
    case concurrentVerification = "concurrent_verification"
    case insufficientFunds = "insufficient_funds"
    case notFound = "not_found"
    case conflict
    case weakPassword = "weak_password"
    case invalidToken = "invalid_token"
    case unavailable
    case timeout
    case `internal`
    // Protocol reasons.
    case parseError = "parse_error"
    case invalidRequest = "invalid_request"
    case methodNotFound = "method_not_found"
    case lineTooLong = "line_too_long"
    case overloaded

    /// The `error.code` sent with this reason: JSON-RPC codes for protocol errors, the matching
    /// HTTP status for application errors.
    public var code: Int {
        switch self {
        case .parseError: -32700
        case .invalidRequest, .lineTooLong: -32600
        case .methodNotFound: -32601
        case .invalidParams: -32602
        case .internal: -32603
        case .invalidToken: 400
        case .unauthenticated, .invalidCredentials: 401
        case .stepUpRequired: 403
        case .notFound: 404
        case .conflict, .concurrentVerification: 409
        // A verification that expired or failed after too many codes is over for good: 410,
        // never a 429 that a client would retry after a pause.
        case .expired, .tooManyAttempts: 410
        case .invalidCode, .weakPassword, .insufficientFunds: 422
        case .locked: 423
        case .rateLimited: 429
        case .unavailable, .overloaded: 503
        case .timeout: 504
        }
    }

    /// The HTTP status an HTTP front end would use for this reason.
    public var httpStatus: Int { RPCError.httpStatus(forCode: code) }
}

/// A JSON-RPC error object: `{"code": Int, "message": String, "data": {"reason": slug, ...}}`.
/// Messages are for people and must never contain secrets.
public struct RPCError: Error, Sendable, Equatable {
    public var code: Int
    public var message: String
    public var data: JSON?

    public init(code: Int, message: String, data: JSON? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    /// An error whose `data` is `{"reason": reason.rawValue, ...extra}`.
    public init(_ reason: Reason, _ message: String, extra: [String: JSON] = [:]) {
        var members = extra
        members["reason"] = .string(reason.rawValue)
        self.init(code: reason.code, message: message, data: .object(members))
    }

    /// `data.reason` as a case, to match on; nil when there is none or this build does not know
    /// it (`reasonText` keeps what was sent).
    public var reason: Reason? { reasonText.flatMap(Reason.init(rawValue:)) }

    /// `data.reason` as sent, for logs and metrics.
    public var reasonText: String? { data?["reason"]?.stringValue }

    public var httpStatus: Int { Self.httpStatus(forCode: code) }

    static func httpStatus(forCode code: Int) -> Int {
        switch code {
        case 400...599: code
        case -32601: 404
        case -32603: 500
        case -32700, -32600, -32602: 400
        default: 500
        }
    }

    public static func parseError(_ message: String) -> RPCError { RPCError(.parseError, message) }

    public static func invalidRequest(_ message: String) -> RPCError { RPCError(.invalidRequest, message) }

    public static func methodNotFound(_ method: String) -> RPCError {
        RPCError(.methodNotFound, "method not found", extra: ["method": .string(method)])
    }

    public static func invalidParams(_ message: String, field: String? = nil) -> RPCError {
        RPCError(.invalidParams, message, extra: field.map { ["field": .string($0)] } ?? [:])
    }

    public static func internalError() -> RPCError { RPCError(.internal, "internal error") }

    /// `{"code", "message", "data"}` (`data` omitted when nil).
    public var json: JSON {
        var members: [String: JSON] = ["code": .int(Int64(code)), "message": .string(message)]
        if let data { members["data"] = data }
        return .object(members)
    }

    /// Reads an error object; nil when `code` is not an integer or `message` not a string.
    public static func decode(_ json: JSON) -> RPCError? {
        guard let code = json["code"]?.intValue, let exactCode = Int(exactly: code),
            let message = json["message"]?.stringValue
        else { return nil }
        return RPCError(code: exactCode, message: message, data: json["data"])
    }
}
