import Contract
import LineProtocol
import RPC

/// How a service asks identity (protocol/internal.md): one declared method at a time. A seam:
/// identity's replicas over the line protocol in production, an in-process fake in unit tests.
/// Each service adds typed helpers for the methods it uses. Blocking: worker threads only.
public protocol IdentityDirectory: Sendable {
    /// Calls one identity method and returns its result, or throws its error answer.
    func call(_ method: MethodContract, _ params: [String: JSON], context: CallContext) throws(RPCError) -> JSON
}

/// Identity over the line protocol: `RPCClient.callAndWait`.
public struct RPCIdentityDirectory: IdentityDirectory {
    public let client: RPCClient
    public let timeoutMilliseconds: Int64

    public init(client: RPCClient, timeoutMilliseconds: Int64 = 5000) {
        self.client = client
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    public func call(_ method: MethodContract, _ params: [String: JSON], context: CallContext) throws(RPCError) -> JSON {
        try client.callAndWait(method, params: params, context: context, timeoutMilliseconds: timeoutMilliseconds)
    }
}
