import LineProtocol
import RPC
import ServiceKit

/// What verification asks identity (protocol/internal.md): who holds a session (also one that
/// still owes factors: verification is how it pays them), a user's phone (and whether it is
/// proved), recording a phone proof, lifting a session to aal 2, ending one, and audit events.
/// Blocking; worker threads only.
public protocol IdentityDirectory: Sendable {
    func introspect(_ params: Params, _ context: CallContext) throws(RPCError) -> SessionInfo
    /// Ends the session in `params.session` (`identity.logout`).
    func endSession(_ params: Params, _ context: CallContext) throws(RPCError)
    func user(_ userID: String, _ context: CallContext) throws(RPCError) -> JSON
    func provePhone(userID: String, number: String, _ context: CallContext) throws(RPCError)
    func elevate(sessionID: String, factor: String, _ context: CallContext) throws(RPCError) -> Int64
    func record(userID: String, event: String, outcome: String, deviceID: String?, _ context: CallContext) throws(RPCError)
}

/// The real directory: identity's replicas over the line protocol.
public struct RPCIdentityDirectory: IdentityDirectory {
    private let client: RPCClient
    private let sessions: SessionResolver

    public init(client: RPCClient) {
        self.client = client
        sessions = SessionResolver(identity: client)
    }

    public func introspect(_ params: Params, _ context: CallContext) throws(RPCError) -> SessionInfo {
        try sessions.resolveOwingFactors(params, context)
    }

    public func endSession(_ params: Params, _ context: CallContext) throws(RPCError) {
        let token = try params.string("session", maxLength: 128)
        _ = try client.callAndWait("identity.logout", params: ["session": .string(token)], context: context)
    }

    public func user(_ userID: String, _ context: CallContext) throws(RPCError) -> JSON {
        try client.callAndWait("identity.user", params: ["user_id": .string(userID)], context: context)
    }

    public func provePhone(userID: String, number: String, _ context: CallContext) throws(RPCError) {
        _ = try client.callAndWait("identity.prove_phone", params: ["user_id": .string(userID), "phone": .string(number)], context: context)
    }

    public func elevate(sessionID: String, factor: String, _ context: CallContext) throws(RPCError) -> Int64 {
        let answer = try client.callAndWait("identity.elevate", params: ["session_id": .string(sessionID), "factor": .string(factor)], context: context)
        return answer["aal"]?.intValue ?? 2
    }

    public func record(userID: String, event: String, outcome: String, deviceID: String?, _ context: CallContext) throws(RPCError) {
        var params: [String: JSON] = ["user_id": .string(userID), "event": .string(event), "outcome": .string(outcome)]
        if let deviceID, !deviceID.isEmpty { params["device_id"] = .string(deviceID) }
        _ = try client.callAndWait("identity.record", params: .object(params), context: context)
    }
}
