import LineProtocol
import ServiceKit

/// The gateway's policy: every public method, in one table. A method that is not here does
/// not exist from outside (-32601), whatever the services behind the gateway register.
/// Keep it in step with protocol/gateway.md and protocol/methods.json (a test compares them).
/// A class, immutable: a request's dispatch holds its method's policy by one reference (a
/// struct was copied with its strings, about 160 instructions a request).
public final class MethodPolicy: Sendable {
    /// Who may call the method. Sessions are checked with `identity.introspect` (cached briefly),
    /// after Ory Kratos' `highest_available`: a session that owes factors (`required_factors`
    /// not empty, e.g. a password on a new device) may only complete them, read itself and log out.
    public enum Access: String, Sendable {
        /// Anyone.
        case open
        /// A valid session (`params.session`) that owes no factor.
        case session
        /// A valid session, also one that still owes factors: the methods that complete a factor,
        /// list the caller's own session, or end it.
        case owesFactorsAllowed = "owes_factors_allowed"
        /// A session that reached aal 2 within identity's step-up window (`step_up_until`):
        /// sensitive changes (keys, other sessions, factors).
        case recentStepUp = "recent_step_up"
    }

    /// When a failed forward may be sent again to another replica.
    public enum Retry: String, Sendable {
        /// Reads and idempotent actions: a second run changes nothing.
        case safe
        /// Writes: only when `params.idempotency_key` is present (the service deduplicates).
        case withIdempotencyKey = "with_idempotency_key"
        /// Only when the request provably never left the gateway (`data.sent == false`).
        case neverSent = "never_sent"
    }

    /// What a success does to the gateway's session cache.
    public enum CacheEffect: Sendable, Equatable {
        case none
        /// The caller's own session changed (logout, aal raised or lowered): drop its entry.
        case dropCallerSession
        /// Another session of the caller ended: drop entries whose session id is `params[key]`.
        case dropSessionID(param: String)
    }

    /// Where the call goes: the service's pool, or a gateway-local answer.
    public let service: String
    public let access: Access
    /// The rate-limit group (per client address, per group): see `RateLimits`.
    public let group: String
    public let retry: Retry
    public let cacheEffect: CacheEffect
    /// Route to the replica named in `params.request_id` (`vr_<replica>_...`), not round robin.
    public let routesByRequestID: Bool
    /// Answered by the gateway itself.
    public let isLocal: Bool

    init(
        _ service: String, _ access: Access, group: String, retry: Retry,
        cacheEffect: CacheEffect = .none, routesByRequestID: Bool = false
    ) {
        self.service = service
        self.access = access
        self.group = group
        self.retry = retry
        self.cacheEffect = cacheEffect
        self.routesByRequestID = routesByRequestID
        isLocal = service == "gateway"
    }

    /// An equal policy in an object of its own (each loop's routes hold their own copies).
    convenience init(copying other: MethodPolicy) {
        self.init(
            other.service, other.access, group: other.group, retry: other.retry, cacheEffect: other.cacheEffect,
            routesByRequestID: other.routesByRequestID)
    }
}

public enum PolicyTable {
    /// Rate-limit groups. Defaults live in `RateLimits.defaults`.
    public enum Group {
        public static let ping = "ping"
        public static let observe = "observe"
        public static let auth = "auth"
        public static let codes = "codes"
        public static let reset = "reset"
        public static let standard = "default"
    }

    // The one table. Services: gateway (answered locally), identity, verification, accounts, reset.
    public static let methods: [String: MethodPolicy] = [
        "gateway.ping": MethodPolicy("gateway", .open, group: Group.ping, retry: .safe),
        // Liveness only (`{"status":"ok"}`): replicas, addresses and figures are served on the
        // operator listener (`--metrics-listen`), never on a public door.
        "gateway.health": MethodPolicy("gateway", .open, group: Group.observe, retry: .safe),

        // Inner pings are forwarded (liveness through the hop, and `latchkey bench ping` measures the hop);
        // inner health and metrics stay private.
        "identity.ping": MethodPolicy("identity", .open, group: Group.ping, retry: .safe),
        "verification.ping": MethodPolicy("verification", .open, group: Group.ping, retry: .safe),
        "accounts.ping": MethodPolicy("accounts", .open, group: Group.ping, retry: .safe),
        "reset.ping": MethodPolicy("reset", .open, group: Group.ping, retry: .safe),

        "identity.register": MethodPolicy("identity", .open, group: Group.auth, retry: .neverSent),
        "identity.login": MethodPolicy("identity", .open, group: Group.auth, retry: .neverSent),
        "identity.logout": MethodPolicy("identity", .owesFactorsAllowed, group: Group.standard, retry: .safe, cacheEffect: .dropCallerSession),
        "identity.sessions": MethodPolicy("identity", .owesFactorsAllowed, group: Group.standard, retry: .safe),
        "identity.revoke": MethodPolicy(
            "identity", .recentStepUp, group: Group.standard, retry: .safe, cacheEffect: .dropSessionID(param: "session_id")),
        "identity.preferences": MethodPolicy("identity", .session, group: Group.standard, retry: .neverSent),
        "identity.challenge": MethodPolicy("identity", .open, group: Group.auth, retry: .safe),
        "identity.enroll_key": MethodPolicy("identity", .recentStepUp, group: Group.standard, retry: .neverSent),
        "identity.verify_key": MethodPolicy("identity", .owesFactorsAllowed, group: Group.auth, retry: .neverSent, cacheEffect: .dropCallerSession),
        "identity.key_login": MethodPolicy("identity", .open, group: Group.auth, retry: .neverSent),
        "identity.keys": MethodPolicy("identity", .session, group: Group.standard, retry: .safe),
        "identity.revoke_key": MethodPolicy("identity", .recentStepUp, group: Group.standard, retry: .safe, cacheEffect: .dropCallerSession),
        "identity.activity": MethodPolicy("identity", .session, group: Group.standard, retry: .safe),
        // Factors identity checks itself (issue 18): enrolling, removing and regenerating are
        // sensitive changes; passing one completes what a session owes, like a code or a signature.
        "identity.totp_enroll": MethodPolicy("identity", .recentStepUp, group: Group.standard, retry: .neverSent),
        "identity.totp_activate": MethodPolicy("identity", .recentStepUp, group: Group.auth, retry: .neverSent),
        "identity.totp_verify": MethodPolicy("identity", .owesFactorsAllowed, group: Group.auth, retry: .neverSent, cacheEffect: .dropCallerSession),
        "identity.totp_remove": MethodPolicy("identity", .recentStepUp, group: Group.standard, retry: .safe),
        "identity.recovery_codes": MethodPolicy("identity", .recentStepUp, group: Group.standard, retry: .neverSent),
        "identity.recovery_verify": MethodPolicy(
            "identity", .owesFactorsAllowed, group: Group.auth, retry: .neverSent, cacheEffect: .dropCallerSession),

        "verification.start": MethodPolicy("verification", .owesFactorsAllowed, group: Group.codes, retry: .neverSent),
        "verification.check": MethodPolicy(
            "verification", .owesFactorsAllowed, group: Group.auth, retry: .neverSent, cacheEffect: .dropCallerSession, routesByRequestID: true),
        "verification.cancel": MethodPolicy("verification", .owesFactorsAllowed, group: Group.standard, retry: .neverSent, routesByRequestID: true),
        "verification.next": MethodPolicy("verification", .owesFactorsAllowed, group: Group.codes, retry: .neverSent, routesByRequestID: true),

        "accounts.balances": MethodPolicy("accounts", .session, group: Group.standard, retry: .safe),
        "accounts.transfer": MethodPolicy("accounts", .session, group: Group.standard, retry: .withIdempotencyKey),
        "accounts.confirm": MethodPolicy("accounts", .session, group: Group.auth, retry: .neverSent),
        "accounts.history": MethodPolicy("accounts", .session, group: Group.standard, retry: .safe),

        "reset.request": MethodPolicy("reset", .open, group: Group.reset, retry: .neverSent),
        "reset.validate": MethodPolicy("reset", .open, group: Group.reset, retry: .safe),
        "reset.complete": MethodPolicy("reset", .open, group: Group.reset, retry: .neverSent),
    ]

    public static func policy(for method: String) -> MethodPolicy? { methods[method] }

    /// Why `access` refuses a session with this introspection (nil: it may call). `nowSeconds` is wall time.
    public static func refusal(_ access: MethodPolicy.Access, _ info: SessionInfo, nowSeconds: Int64) -> RPCError? {
        switch access {
        case .open, .owesFactorsAllowed:
            return nil
        case .session, .recentStepUp:
            if !info.requiredFactors.isEmpty { return SessionResolver.factorsOwed(info.requiredFactors) }
            guard access == .recentStepUp, (info.stepUpUntil ?? 0) <= nowSeconds else { return nil }
            return RPCError(
                .stepUpRequired, "this change needs a second factor passed recently; pass one again",
                extra: ["detail": "recent_step_up", "aal": .int(info.aal)])
        }
    }

    /// The services the gateway forwards to, in a fixed order.
    public static let services = ["identity", "verification", "accounts", "reset"]

    /// The replica id named by a verification request id (`vr_<replica>_<random>`), if well formed.
    public static func replicaID(fromRequestID requestID: String) -> String? {
        guard requestID.hasPrefix("vr_") else { return nil }
        let rest = requestID.dropFirst(3)
        guard let underscore = rest.firstIndex(of: "_") else { return nil }
        let replica = rest[..<underscore]
        let allowed = replica.utf8.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-")
        }
        return replica.isEmpty || !allowed ? nil : String(replica)
    }
}
