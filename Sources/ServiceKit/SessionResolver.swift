import LineProtocol

/// Who a session token belongs to, as identity's `introspect` says.
public struct SessionInfo: Sendable, Equatable {
    public let userID: String
    public let sessionID: String
    public let deviceID: String
    public let aal: Int
    public let aal2At: Int64?
    public let expiresAt: Int64

    public init(userID: String, sessionID: String, deviceID: String, aal: Int, aal2At: Int64?, expiresAt: Int64) {
        self.userID = userID
        self.sessionID = sessionID
        self.deviceID = deviceID
        self.aal = aal
        self.aal2At = aal2At
        self.expiresAt = expiresAt
    }

    public init?(introspection json: JSON) {
        guard let userID = json["user_id"]?.stringValue, let sessionID = json["session_id"]?.stringValue,
            let aal = json["aal"]?.intValue, let expiresAt = json["expires_at"]?.intValue
        else { return nil }
        self.init(
            userID: userID, sessionID: sessionID, deviceID: json["device_id"]?.stringValue ?? "",
            aal: Int(aal), aal2At: json["aal2_at"]?.intValue, expiresAt: expiresAt)
    }
}

/// Resolves `params.session` through `identity.introspect` on every call: services keep
/// no cache, so a revoked session stops working at once. For worker threads only.
public struct SessionResolver: Sendable {
    private let identity: RPCClient

    public init(identity: RPCClient) { self.identity = identity }

    public func resolve(_ params: Params, _ context: CallContext) throws(RPCError) -> SessionInfo {
        guard let token = try params.optionalString("session", maxLength: 128), !token.isEmpty else {
            throw RPCError(.unauthenticated, "a session is required")
        }
        let answer = try identity.callAndWait("identity.introspect", params: ["session": .string(token)], context: context)
        guard let session = SessionInfo(introspection: answer) else {
            throw RPCError(.unavailable, "identity gave an unreadable introspection")
        }
        return session
    }
}
