import Contract
import LineProtocol
import Platform
import RPC

/// Who a session token belongs to, as identity's `introspect` says: one reading for the gateway
/// (its policy and cache) and for the services that resolve sessions themselves.
public struct SessionInfo: Sendable, Equatable {
    public let userID: String
    public let sessionID: String
    /// Empty when the session is bound to no device.
    public let deviceID: String
    public let aal: Int64
    public let aal2At: Int64?
    public let expiresAt: Int64
    /// Factors the session still owes: while not empty it may only complete them and log out.
    public let requiredFactors: [String]
    /// Until when (unix seconds) its aal 2 counts as recent; nil when it never reached aal 2.
    public let stepUpUntil: Int64?
    /// The user's phone when its owner proved it; only asked for by `resolve(withProvenPhone:)`,
    /// nil otherwise (and never kept in the gateway's cache).
    public let provenPhone: String?
    /// With `provenPhone`: until when SMS codes confirm no money, after a phone change.
    public let phoneCoolingOffUntil: Int64?

    public init(
        userID: String, sessionID: String, deviceID: String, aal: Int64, aal2At: Int64? = nil, expiresAt: Int64,
        requiredFactors: [String] = [], stepUpUntil: Int64? = nil, provenPhone: String? = nil, phoneCoolingOffUntil: Int64? = nil
    ) {
        self.userID = userID
        self.sessionID = sessionID
        self.deviceID = deviceID
        self.aal = aal
        self.aal2At = aal2At
        self.expiresAt = expiresAt
        self.requiredFactors = requiredFactors
        self.stepUpUntil = stepUpUntil
        self.provenPhone = provenPhone
        self.phoneCoolingOffUntil = phoneCoolingOffUntil
    }

    public var owesFactors: Bool { !requiredFactors.isEmpty }

    /// Nil when a member is missing, `required_factors` included: a session whose assurance is
    /// unknown is not trusted with anything.
    public init?(introspection json: JSON) {
        guard let userID = json["user_id"]?.stringValue, let sessionID = json["session_id"]?.stringValue,
            let aal = json["aal"]?.intValue, let expiresAt = json["expires_at"]?.intValue,
            let required = json["required_factors"]?.arrayValue
        else { return nil }
        self.init(
            userID: userID, sessionID: sessionID, deviceID: json["device_id"]?.stringValue ?? "", aal: aal,
            aal2At: json["aal2_at"]?.intValue, expiresAt: expiresAt, requiredFactors: required.compactMap(\.stringValue),
            stepUpUntil: json["step_up_until"]?.intValue, provenPhone: json["proven_phone"]?.stringValue,
            phoneCoolingOffUntil: json["phone_cooling_off_until"]?.intValue)
    }
}

/// Resolves `params.session` through `identity.introspect` on every call: services keep
/// no cache, so a revoked session stops working at once.
public struct SessionResolver: Sendable {
    private let identity: any IdentityDirectory

    public init(identity: any IdentityDirectory) { self.identity = identity }

    public init(identity: RPCClient) { self.init(identity: RPCIdentityDirectory(client: identity)) }

    /// The session, refused with `step_up_required` while it owes factors (as the gateway's
    /// `session` access refuses it): a password alone never acts like two factors.
    /// `withProvenPhone`: the answer also carries the user's proven phone (`provenPhone`).
    public func resolve(_ params: Params, _ context: CallContext, withProvenPhone: Bool = false) async throws(RPCError) -> SessionInfo {
        let session = try await resolveOwingFactors(params, context, withProvenPhone: withProvenPhone)
        if let refusal = session.refusal(for: .session, nowSeconds: WallClock.nowSeconds()) { throw refusal }
        return session
    }

    /// The session even while it owes factors: only for the methods that complete them.
    public func resolveOwingFactors(_ params: Params, _ context: CallContext, withProvenPhone: Bool = false) async throws(RPCError) -> SessionInfo {
        guard let token = try params.optionalString("session", maxLength: 128), !token.isEmpty else {
            throw RPCError(.unauthenticated, "a session is required")
        }
        var question: [String: JSON] = ["session": .string(token)]
        if withProvenPhone { question["with_proven_phone"] = true }
        let answer = try await identity.call(IdentityInternalContract.introspect, question, context: context)
        guard let session = SessionInfo(introspection: answer) else {
            throw RPCError(.unavailable, "identity gave an unreadable introspection")
        }
        return session
    }

    /// The one `step_up_required` answer for a session that owes factors (gateway and services alike).
    public static func factorsOwed(_ factors: [String]) -> RPCError {
        RPCError(.stepUpRequired, "complete the second factor first", extra: ["detail": "factors_owed", "required_factors": .array(factors.map(JSON.string))])
    }
}
