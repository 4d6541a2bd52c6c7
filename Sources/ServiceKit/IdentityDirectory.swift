import Contract
import LineProtocol
import RPC

/// How a service asks identity (protocol/internal.md): one declared method at a time. A seam:
/// identity's replicas over the line protocol in production, an in-process fake in unit tests.
/// Each service adds typed helpers for the methods it uses.
public protocol IdentityDirectory: Sendable {
    /// Calls one identity method and returns its result, or throws its error answer. Awaited by
    /// request handlers, which give their worker thread back while identity answers.
    func call(_ method: MethodContract, _ params: [String: JSON], context: CallContext) async throws(RPCError) -> JSON
    /// `call`, blocking the calling thread: for background jobs, which run on threads of their own.
    func callAndWait(_ method: MethodContract, _ params: [String: JSON], context: CallContext) throws(RPCError) -> JSON
}

extension IdentityDirectory {
    /// An in-process directory answers at once: awaiting it is calling it.
    public func call(_ method: MethodContract, _ params: [String: JSON], context: CallContext) async throws(RPCError) -> JSON {
        try callAndWait(method, params, context: context)
    }
}

/// Identity over the line protocol.
public struct RPCIdentityDirectory: IdentityDirectory {
    public let client: RPCClient
    public let timeoutMilliseconds: Int64

    public init(client: RPCClient, timeoutMilliseconds: Int64 = 5000) {
        self.client = client
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    public func call(_ method: MethodContract, _ params: [String: JSON], context: CallContext) async throws(RPCError) -> JSON {
        try await client.call(method, params: params, context: context, timeoutMilliseconds: timeoutMilliseconds)
    }

    public func callAndWait(_ method: MethodContract, _ params: [String: JSON], context: CallContext) throws(RPCError) -> JSON {
        try client.callAndWait(method, params: params, context: context, timeoutMilliseconds: timeoutMilliseconds)
    }
}
