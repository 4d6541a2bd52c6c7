import Foundation

/// Every failure a call can end with: one case per `data.reason` of the protocol's error table
/// (`protocol/README.md` §3, and the HTTP door's own in `protocol/http.md`), carrying its data,
/// plus the client's own (`notSignedIn`, `network`, `invalidResponse`). Never holds a secret:
/// the server's errors never echo input, and the client adds none.
public enum LatchkeyError: Error, Sendable, Equatable {
    case parseError
    case invalidRequest
    case lineTooLong
    case methodNotFound(method: String?)
    /// A parameter is missing, mistyped or out of range; `rule` says which rule when the server names one.
    /// For a parameter the method does not take, `field` names it and `accepted` lists the ones it does.
    case invalidParams(field: String?, rule: String?, accepted: [String]? = nil)
    /// A server bug; the details are in the server's log.
    case internalError
    /// No session, or an unknown, expired or revoked one: sign in again. The stored session is dropped.
    case unauthenticated
    /// Wrong username or password (the same for unknown users), or a device-key signature that does not verify.
    case invalidCredentials
    case stepUpRequired(StepUp)
    case notFound(detail: String?)
    case conflict(field: String?, detail: String?, status: String?)
    /// A code for this user and phone is already live: `requestID` is the caller's own.
    case concurrentVerification(requestID: String?)
    case expired
    case invalidCode(attemptsLeft: Int?)
    case weakPassword(rule: String?)
    case insufficientFunds
    /// Too many failed logins for this account: wait `retryAfter` seconds.
    case locked(retryAfter: Int)
    /// Too many requests: wait `retryAfter` seconds. `scope` for code sends (`number`, `user`, `client`, `global`).
    case rateLimited(retryAfter: Int, scope: String?)
    /// The verification failed for good (do not retry it); a login code failed this way also ended the session.
    case tooManyAttempts
    /// An unknown, expired or used token or challenge.
    case invalidToken(detail: String?)
    /// A service could not be reached; `sent` says whether the request left the gateway.
    case unavailable(sent: Bool?)
    case overloaded
    case timeout
    /// HTTP door: the route does not take this HTTP method.
    case methodNotAllowed
    /// HTTP door: the body is not declared as JSON.
    case unsupportedMediaType
    /// HTTP door: the request was malformed at the HTTP level.
    case badRequest
    /// A reason this client does not know yet (a newer server).
    case unrecognized(reason: String, status: Int, message: String)
    /// The call needs a session and none is stored: nothing was sent.
    case notSignedIn
    /// The request could not be completed (no network, connection lost, TLS); it may or may not have arrived.
    case network(String)
    /// The answer was not the protocol's shape.
    case invalidResponse(status: Int)

    /// What a `step_up_required` asks for.
    public enum StepUp: Sendable, Equatable {
        /// The session owes one of these factors before anything but paying them (`detail: factors_owed`).
        case factorsOwed([Factor])
        /// A sensitive change needs a second factor passed recently (`detail: recent_step_up`).
        case recentStepUp(windowSeconds: Int?)
        case other(detail: String?)
    }

    /// The protocol's `data.reason` slug this error stands for (nil for the client's own).
    public var reason: String? {
        switch self {
        case .parseError: "parse_error"
        case .invalidRequest: "invalid_request"
        case .lineTooLong: "line_too_long"
        case .methodNotFound: "method_not_found"
        case .invalidParams: "invalid_params"
        case .internalError: "internal"
        case .unauthenticated: "unauthenticated"
        case .invalidCredentials: "invalid_credentials"
        case .stepUpRequired: "step_up_required"
        case .notFound: "not_found"
        case .conflict: "conflict"
        case .concurrentVerification: "concurrent_verification"
        case .expired: "expired"
        case .invalidCode: "invalid_code"
        case .weakPassword: "weak_password"
        case .insufficientFunds: "insufficient_funds"
        case .locked: "locked"
        case .rateLimited: "rate_limited"
        case .tooManyAttempts: "too_many_attempts"
        case .invalidToken: "invalid_token"
        case .unavailable: "unavailable"
        case .overloaded: "overloaded"
        case .timeout: "timeout"
        case .methodNotAllowed: "method_not_allowed"
        case .unsupportedMediaType: "unsupported_media_type"
        case .badRequest: "bad_request"
        case .unrecognized(let reason, _, _): reason
        case .notSignedIn, .network, .invalidResponse: nil
        }
    }

    /// Seconds the server asked the client to wait, when it did.
    public var retryAfter: Int? {
        switch self {
        case .locked(let seconds), .rateLimited(let seconds, _): seconds
        default: nil
        }
    }
}

extension LatchkeyError {
    /// The error an answer's `error` object stands for. `status`: the HTTP status (the body's
    /// `code` equals it on the HTTP door). `retryAfterHeader` fills `retry_after` when the body lacks it.
    init(status: Int, message: String, data: [String: JSONValue], retryAfterHeader: Int? = nil) {
        let string = { (key: String) in data[key]?.stringValue }
        let int = { (key: String) in data[key]?.intValue }
        let retryAfter = int("retry_after") ?? retryAfterHeader ?? 0
        switch data["reason"]?.stringValue ?? "" {
        case "parse_error": self = .parseError
        case "invalid_request": self = .invalidRequest
        case "line_too_long": self = .lineTooLong
        case "method_not_found": self = .methodNotFound(method: string("method"))
        case "invalid_params":
            self = .invalidParams(field: string("field"), rule: string("rule"), accepted: data["accepted"]?.arrayValue?.compactMap(\.stringValue))
        case "internal": self = .internalError
        case "unauthenticated": self = .unauthenticated
        case "invalid_credentials": self = .invalidCredentials
        case "step_up_required": self = .stepUpRequired(Self.stepUp(data))
        case "not_found": self = .notFound(detail: string("detail"))
        case "conflict": self = .conflict(field: string("field"), detail: string("detail"), status: string("status"))
        case "concurrent_verification": self = .concurrentVerification(requestID: string("request_id"))
        case "expired": self = .expired
        case "invalid_code": self = .invalidCode(attemptsLeft: int("attempts_left"))
        case "weak_password": self = .weakPassword(rule: string("rule"))
        case "insufficient_funds": self = .insufficientFunds
        case "locked": self = .locked(retryAfter: retryAfter)
        case "rate_limited": self = .rateLimited(retryAfter: retryAfter, scope: string("scope"))
        case "too_many_attempts": self = .tooManyAttempts
        case "invalid_token": self = .invalidToken(detail: string("detail"))
        case "unavailable": self = .unavailable(sent: data["sent"]?.boolValue)
        case "overloaded": self = .overloaded
        case "timeout": self = .timeout
        case "method_not_allowed": self = .methodNotAllowed
        case "unsupported_media_type": self = .unsupportedMediaType
        case "bad_request": self = .badRequest
        case let other: self = .unrecognized(reason: other, status: status, message: message)
        }
    }

    private static func stepUp(_ data: [String: JSONValue]) -> StepUp {
        switch data["detail"]?.stringValue {
        case "factors_owed":
            let factors = data["required_factors"]?.arrayValue?.compactMap(\.stringValue).map(Factor.init(rawValue:)) ?? []
            return .factorsOwed(factors)
        case "recent_step_up":
            return .recentStepUp(windowSeconds: data["window_s"]?.intValue)
        case let detail:
            return .other(detail: detail)
        }
    }
}
