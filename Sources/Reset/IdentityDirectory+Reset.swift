import Contract
import Delivery
import LineProtocol
import RPC
import ServiceKit

/// The identity methods reset's background jobs use (protocol/internal.md), typed. They block:
/// the jobs run on threads of their own.
extension IdentityDirectory {
    /// The user id for an address, or nil when identity has no such account.
    func findUser(email: String, context: CallContext) throws(RPCError) -> String? {
        do throws(RPCError) {
            let result = try callAndWait(IdentityInternalContract.findByEmail, ["email": .string(email)], context: context)
            guard let userID = result["user_id"]?.stringValue else { throw RPCError.internalError() }
            return userID
        } catch where error.reason == .notFound {
            return nil
        }
    }

    /// The user's e-mail address and the language of their mails, or nil when the user no longer exists.
    func recipient(userID: String, context: CallContext) throws(RPCError) -> (email: String, locale: MailLocale)? {
        do throws(RPCError) {
            let user = try callAndWait(IdentityInternalContract.user, ["user_id": .string(userID)], context: context)
            guard let email = user["email"]?.stringValue else { return nil }
            return (email, MailLocale(stored: user["locale"]?.stringValue))
        } catch where error.reason == .notFound {
            return nil
        }
    }
}
