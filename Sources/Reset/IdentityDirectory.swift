import LineProtocol
import RPC

/// What reset needs from identity (protocol/internal.md). A seam: the service calls identity
/// over TCP in production; unit tests answer in-process.
public protocol IdentityDirectory: Sendable {
    /// Calls one internal identity method and returns its result, or throws its error answer.
    func call(_ method: String, _ params: [String: JSON], context: CallContext) throws(RPCError) -> JSON
}

/// Identity over the line protocol: `RPCClient.callAndWait` on a worker thread.
public struct RPCIdentityDirectory: IdentityDirectory {
    public let client: RPCClient
    public let timeoutMilliseconds: Int64

    public init(client: RPCClient, timeoutMilliseconds: Int64 = 5000) {
        self.client = client
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    public func call(_ method: String, _ params: [String: JSON], context: CallContext) throws(RPCError) -> JSON {
        try client.callAndWait(method, params: .object(params), context: context, timeoutMilliseconds: timeoutMilliseconds)
    }
}

/// Typed helpers over the identity methods reset uses.
extension IdentityDirectory {
    /// The user id for an address, or nil when identity has no such account.
    func findUser(email: String, context: CallContext) throws(RPCError) -> String? {
        do throws(RPCError) {
            let result = try call("identity.find_by_email", ["email": .string(email)], context: context)
            guard let userID = result["user_id"]?.stringValue else { throw RPCError.internalError() }
            return userID
        } catch where error.reason == Reason.notFound.rawValue {
            return nil
        }
    }

    /// The user's e-mail address, or nil when the user no longer exists.
    func email(userID: String, context: CallContext) throws(RPCError) -> String? {
        do throws(RPCError) {
            return try call("identity.user", ["user_id": .string(userID)], context: context)["email"]?.stringValue
        } catch where error.reason == Reason.notFound.rawValue {
            return nil
        }
    }
}
