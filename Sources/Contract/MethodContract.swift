import LineProtocol

/// One method, declared once: its name, who may call it, how the gateway limits and retries it,
/// what it takes, what it answers and which errors it may give. Routers register handlers by
/// it, the gateway's policy is read from it, and protocol/methods.json and protocol/openapi.json
/// are written from it.
public struct MethodContract: Sendable {
    /// Who may call the method.
    public enum Access: String, Sendable, CaseIterable {
        /// Anyone, through the gateway.
        case open
        /// A valid session (`params.session`) that owes no factor.
        case session
        /// A valid session, also one that still owes factors (e.g. a password on a new device):
        /// the methods that complete a factor, list the caller's own session, or end it.
        case owesFactorsAllowed = "owes_factors_allowed"
        /// A session that reached aal 2 within identity's step-up window: sensitive changes.
        case recentStepUp = "recent_step_up"
        /// Other services only, on the private network (with the service token when one is set).
        case `internal`
        /// The `latchkey` tool only, like internal: an operator's action on a user.
        case `operator`

        /// Reachable through the gateway's doors.
        public var isPublic: Bool { self != .internal && self != .operator }
        /// Needs a session that owes no factor.
        public var needsSettledSession: Bool { self == .session || self == .recentStepUp }
    }

    /// The gateway's rate-limit group (per client address, per group).
    public enum RateGroup: String, Sendable, CaseIterable {
        case ping, observe, auth, codes, reset
        case standard = "default"
    }

    /// When a failed call may be sent again to another replica.
    public enum Retry: String, Sendable {
        /// Reads and idempotent actions: a second run changes nothing.
        case safe
        /// Writes: only when `params.idempotency_key` is present (the service deduplicates).
        case withIdempotencyKey = "with_idempotency_key"
        /// Only when the request provably never left the caller.
        case neverSent = "never_sent"
    }

    /// What a success does to the gateway's session cache.
    public enum CacheEffect: Sendable, Equatable {
        case none
        /// The caller's own session changed (logout, aal raised or lowered): drop its entry.
        case dropCallerSession
        /// Another session of the caller ended: drop entries whose session id is `params[param]`.
        case dropSessionID(param: String)
    }

    /// The parameters a form takes and the members its answer has.
    public struct Form: Sendable {
        public let params: [Member]
        /// The answer's members; nil for an object of any members (a replica's metrics).
        public let result: [Member]?
        public let errors: [Reason]

        public init(params: [Member], result: [Member]?, errors: [Reason]) {
            self.params = params
            self.result = result
            self.errors = errors
        }
    }

    public let name: String
    public let service: String
    public let access: Access
    public let group: RateGroup
    public let retry: Retry
    public let summary: String
    /// The form callers of `access` use.
    public let form: Form
    /// The form other services use when the method is public too (verification's methods
    /// without a session): told apart by the absence of `session`.
    public let internalForm: Form?
    public let cacheEffect: CacheEffect
    /// The gateway routes to the replica named in `params.request_id` (`vr_<replica>_...`).
    public let routesByRequestID: Bool

    public init(
        _ name: String, _ access: Access, group: RateGroup = .standard, retry: Retry, summary: String,
        params: [Member] = [], result: [Member]?, errors: [Reason] = [], internalForm: Form? = nil,
        cacheEffect: CacheEffect = .none, routesByRequestID: Bool = false
    ) {
        self.name = name
        service = String(name.prefix { $0 != "." })
        self.access = access
        self.group = group
        self.retry = retry
        self.summary = summary
        form = Form(params: params, result: result, errors: errors)
        self.internalForm = internalForm
        self.cacheEffect = cacheEffect
        self.routesByRequestID = routesByRequestID
    }

    /// Reasons any method may answer whatever it declares: its input's shape, the gateway's
    /// limits, and the conditions of a server under load or failing.
    public static let universalReasons: [Reason] = [
        .invalidParams, .rateLimited, .overloaded, .timeout, .unavailable, .internal,
        .parseError, .invalidRequest, .methodNotFound, .lineTooLong,
    ]

    /// The form a call takes: the internal one when the method has one and no session is given.
    public func form(withSession: Bool) -> Form {
        if let internalForm, !withSession { return internalForm }
        return form
    }
}
