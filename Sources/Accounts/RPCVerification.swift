import Contract
import FoundationEssentials
import LineProtocol
import RPC

/// `VerificationPort` over the wire: internal `verification.start` / `check` / `status`,
/// check and status pinned to the replica named in the request id (`vr_<replica>_<random>`),
/// or sent to any replica when the id names none (PostgreSQL: `vr_<hex>`).
public struct RPCVerification: VerificationPort {
    let client: RPCClient

    public init(client: RPCClient) { self.client = client }

    public func start(userID: String, provenPhone: String?, payload: [String: JSON], expirySeconds: Int64, context: CallContext?) async throws(RPCError) -> String {
        var params: [String: JSON] = [
            "user_id": .string(userID), "channel": "sms", "purpose": "transaction",
            "payload": .object(payload), "code_expiry_s": .int(expirySeconds),
        ]
        if let provenPhone { params["proven_number"] = .string(provenPhone) }
        let answer = try await call(VerificationContract.start, replicaID: nil, params: params, context: context)
        guard let requestID = answer["request_id"]?.stringValue, !requestID.isEmpty else {
            throw RPCError(.unavailable, "verification gave no request_id")
        }
        return requestID
    }

    public func check(requestID: String, code: String, payload: [String: JSON], context: CallContext?) async throws(RPCError) {
        let answer = try await pinnedCall(VerificationContract.check, requestID: requestID, params: [
            "request_id": .string(requestID), "code": .string(code), "payload": .object(payload),
        ], context: context)
        guard answer["status"]?.stringValue == "verified" else {
            throw RPCError(.unavailable, "verification gave an unexpected answer")
        }
    }

    public func isVerified(requestID: String, context: CallContext?) async throws(RPCError) -> Bool {
        let answer = try await pinnedCall(VerificationContract.statusOf, requestID: requestID, params: ["request_id": .string(requestID)], context: context)
        return answer["status"]?.stringValue == "verified"
    }

    public func cancel(requestID: String, context: CallContext?) async throws(RPCError) {
        _ = try await pinnedCall(VerificationContract.cancel, requestID: requestID, params: ["request_id": .string(requestID)], context: context)
    }

    /// The owner replica of a request id, or nil for ids without one.
    static func replicaID(of requestID: String) -> String? {
        guard requestID.hasPrefix("vr_") else { return nil }
        let rest = requestID.dropFirst(3)
        guard let end = rest.firstIndex(of: "_"), end != rest.startIndex else { return nil }
        return String(rest[..<end])
    }

    /// Calls the replica that owns the request, or any replica for an id that names none (the
    /// replicas share PostgreSQL).
    private func pinnedCall(_ method: MethodContract, requestID: String, params: [String: JSON], context: CallContext?) async throws(RPCError) -> JSON {
        try await call(method, replicaID: Self.replicaID(of: requestID), params: params, context: context)
    }

    /// A call that never left (a replica's id not learned yet right after start-up, or a replica
    /// that just died and refuses connections) is safe to send again, briefly; the client then
    /// picks a live replica unless the call is pinned. The pauses end where the caller's
    /// deadline would: the last error is answered while there is still time to send it.
    private func call(_ method: MethodContract, replicaID replica: String?, params: [String: JSON], context: CallContext?) async throws(RPCError) -> JSON {
        var attempt = 0
        while true {
            do throws(RPCError) {
                return try await client.call(method, params: params, context: context, replicaID: replica)
            } catch where error.reason == .unavailable && error.data?["sent"] == .bool(false) && attempt < Self.resendLimit {
                let left = context?.remainingMilliseconds ?? Int64.max
                guard left > 2 * Self.resendPauseMilliseconds else { throw error }
                attempt += 1
                try? await Task.sleep(for: .milliseconds(Self.resendPauseMilliseconds))
            }
        }
    }

    static let resendLimit = 10
    static let resendPauseMilliseconds: Int64 = 50
}
