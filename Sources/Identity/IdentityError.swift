import LineProtocol
import RPC
import ServiceKit
import WebAuthn

/// Everything that can go wrong in the identity service, mapped to wire reasons in one place
/// (`rpcError`). Messages are for people and never carry a secret or the value that failed.
public enum IdentityError: Error, Equatable, Sendable {
    /// A parameter has the right type but an unacceptable value.
    case invalidField(String, String)
    /// The session token is unknown, expired, idle too long or revoked (one answer for all).
    case unauthenticated
    /// The session still owes these factors: it may only complete them, read itself and log out.
    case factorsOwed([String])
    /// The call needs aal 2 reached within the last `windowSeconds` (a sensitive change).
    case recentStepUpRequired(windowSeconds: Int64)
    /// Wrong username or password (or unknown user: the same answer), or a bad signature.
    case invalidCredentials(String)
    /// The account is throttled after too many failed passwords.
    case locked(retryAfterSeconds: Int64)
    /// This client address spent its login budget.
    case rateLimited(retryAfterSeconds: Int64)
    /// A password policy rule failed (`rule` is stable: `too_short`, `breached`...).
    case weakPassword(rule: String, String)
    /// A username or e-mail already registered (`field` says which).
    case conflict(field: String, String)
    /// Too many active keys.
    case keyLimit(Int)
    /// No such thing for this user (`detail` is stable, e.g. `key_revoked`).
    case notFound(String, detail: String? = nil)
    /// A device-key challenge that is unknown, used, expired or issued for another user/device.
    case invalidChallenge(detail: String)
    /// A wrong (or replayed) authenticator or recovery code; `attemptsLeft` before the budget locks.
    case invalidCode(attemptsLeft: Int)
    /// The user's budget of wrong second-factor codes is locked.
    case factorLocked(retryAfterSeconds: Int64)
    /// A factor is in a state that forbids the change (`detail` is stable, e.g. `totp_active`).
    case factorConflict(detail: String, String)
    /// Too many passkeys.
    case passkeyLimit(Int)
    /// A passkey ceremony or an App Attest attestation or assertion refused (`detail` is the check that failed).
    case ceremonyRefused(WebAuthnError)
    /// A mailed link that is unknown, used, expired, replaced by a newer one, or about an
    /// address the account no longer has (one answer for all).
    case invalidLink
    /// A link was mailed moments ago: the next may be asked for after `retryAfterSeconds`.
    case linkTooSoon(retryAfterSeconds: Int64)

    public var rpcError: RPCError {
        switch self {
        case .invalidField(let field, let message):
            return RPCError.invalidParams(message, field: field)
        case .unauthenticated:
            return RPCError(.unauthenticated, "session is not valid; log in again")
        case .factorsOwed(let factors):
            return SessionResolver.factorsOwed(factors)
        case .recentStepUpRequired(let window):
            return RPCError(
                .stepUpRequired, "this change needs a second factor passed within the last \(window) seconds",
                extra: ["detail": "recent_step_up", "window_s": .int(window)])
        case .invalidCredentials(let message):
            return RPCError(.invalidCredentials, message)
        case .locked(let seconds):
            return RPCError(.locked, "too many failed logins for this account; try again later", extra: ["retry_after": .int(seconds)])
        case .rateLimited(let seconds):
            return RPCError(.rateLimited, "too many attempts from this address; try again later", extra: ["retry_after": .int(seconds)])
        case .weakPassword(let rule, let message):
            return RPCError(.weakPassword, message, extra: ["rule": .string(rule)])
        case .conflict(let field, let message):
            return RPCError(.conflict, message, extra: ["field": .string(field)])
        case .keyLimit(let limit):
            return RPCError(.conflict, "too many device keys; revoke one first", extra: ["detail": "key_limit", "limit": .int(Int64(limit))])
        case .passkeyLimit(let limit):
            return RPCError(.conflict, "too many passkeys; remove one first", extra: ["detail": "passkey_limit", "limit": .int(Int64(limit))])
        case .ceremonyRefused(let refusal):
            return RPCError(.invalidCredentials, refusal.message, extra: ["detail": .string(refusal.reason.rawValue)])
        case .notFound(let message, let detail):
            return RPCError(.notFound, message, extra: detail.map { ["detail": .string($0)] } ?? [:])
        case .invalidCode(let attemptsLeft):
            return RPCError(.invalidCode, "wrong code", extra: ["attempts_left": .int(Int64(attemptsLeft))])
        case .factorLocked(let seconds):
            return RPCError(.locked, "too many wrong codes; try again later", extra: ["retry_after": .int(seconds)])
        case .factorConflict(let detail, let message):
            return RPCError(.conflict, message, extra: ["detail": .string(detail)])
        case .invalidLink:
            return RPCError(.invalidToken, "this link does not work: it was used, it expired or a newer one replaced it; ask for a new one")
        case .linkTooSoon(let seconds):
            return RPCError(.rateLimited, "a link was mailed moments ago; ask again later", extra: ["retry_after": .int(seconds)])
        case .invalidChallenge(let detail):
            let message: String
            switch detail {
            case "used": message = "challenge was already used; ask for a new one"
            case "expired": message = "challenge expired; ask for a new one"
            case "foreign": message = "challenge was issued for another user or device"
            default: message = "unknown challenge; ask for a new one"
            }
            return RPCError(.invalidToken, message, extra: ["detail": .string(detail)])
        }
    }
}

extension IdentityError: RPCErrorConvertible {}
