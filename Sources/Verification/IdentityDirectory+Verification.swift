import Contract
import LineProtocol
import RPC
import ServiceKit

/// What verification asks identity (protocol/internal.md), typed: who holds a session (also one
/// that still owes factors: verification is how it pays them), a user's phone (and whether it
/// is proved), recording a phone proof, lifting a session to aal 2, ending one, and audit events.
extension IdentityDirectory {
    func introspect(_ params: Params, _ context: CallContext) async throws(RPCError) -> SessionInfo {
        try await SessionResolver(identity: self).resolveOwingFactors(params, context)
    }

    /// Ends the session in `params.session` (`identity.logout`).
    func endSession(_ params: Params, _ context: CallContext) async throws(RPCError) {
        let token = try params.string("session", maxLength: 128)
        _ = try await call(IdentityContract.logout, ["session": .string(token)], context: context)
    }

    func user(_ userID: String, _ context: CallContext) async throws(RPCError) -> JSON {
        try await call(IdentityInternalContract.user, ["user_id": .string(userID)], context: context)
    }

    func provePhone(userID: String, number: String, _ context: CallContext) async throws(RPCError) {
        _ = try await call(IdentityInternalContract.provePhone, ["user_id": .string(userID), "phone": .string(number)], context: context)
    }

    func elevate(sessionID: String, factor: String, _ context: CallContext) async throws(RPCError) -> Int64 {
        let answer = try await call(IdentityInternalContract.elevate, ["session_id": .string(sessionID), "factor": .string(factor)], context: context)
        return answer["aal"]?.intValue ?? 2
    }

    func record(userID: String, event: String, outcome: String, deviceID: String?, _ context: CallContext) async throws(RPCError) {
        var params: [String: JSON] = ["user_id": .string(userID), "event": .string(event), "outcome": .string(outcome)]
        if let deviceID, !deviceID.isEmpty { params["device_id"] = .string(deviceID) }
        _ = try await call(IdentityInternalContract.record, params, context: context)
    }
}
