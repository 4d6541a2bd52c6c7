import Contract
import LineProtocol
import RPC

/// The account's own changes (`identity.change_password`, the e-mail links): typed params in,
/// `IdentityService` called, the JSON answer shaped.
enum IdentityAccountMethods {
    static func register(_ router: Router, _ service: IdentityService) {
        let tokenMaxBytes = IdentityMethods.tokenMaxBytes
        let passwordMaxBytes = IdentityMethods.passwordMaxBytes
        router.register(IdentityAccountContract.changePassword) { params, context in
            let ended = try service.changePassword(
                token: try params.string("session", maxLength: tokenMaxBytes),
                currentPassword: try params.string("current_password", maxLength: passwordMaxBytes),
                newPassword: try params.string("new_password", maxLength: passwordMaxBytes), caller: caller(context))
            return ["ok": true, "sessions_ended": .int(Int64(ended))]
        }
        router.register(IdentityAccountContract.changePhone) { params, context in
            try service.changePhone(
                token: try params.string("session", maxLength: tokenMaxBytes), phone: try params.string("phone", maxLength: 64), caller: caller(context))
            return ["ok": true, "phone_verified": false]
        }
        // The SMS to the number a phone change left: verification sends it.
        router.register(PhoneNoticeContract.due) { params, _ in
            let due = try service.store.phoneNoticesDue(limit: Int(try params.optionalInt("limit", range: 1...100) ?? 16))
            return ["notices": .array(due.map { ["notice_id": .int($0.noticeID), "number": .string($0.number), "locale": .string($0.locale.rawValue)] })]
        }
        router.register(PhoneNoticeContract.sent) { params, _ in
            try service.store.phoneNoticeSent(noticeID: try params.int("notice_id"))
            return ["ok": true]
        }
        router.register(IdentityAccountContract.verifyEmail) { params, context in
            let email = try service.verifyEmail(token: try params.string("token", maxLength: tokenMaxBytes), caller: caller(context))
            return ["ok": true, "email": .string(email)]
        }
        router.register(IdentityAccountContract.resendVerification) { params, context in
            try service.resendVerification(token: try params.string("session", maxLength: tokenMaxBytes), caller: caller(context))
            return ["ok": true]
        }
        router.register(IdentityAccountContract.changeEmail) { params, context in
            try service.changeEmail(
                token: try params.string("session", maxLength: tokenMaxBytes), email: try params.string("email", maxLength: EmailAddress.maxBytes),
                caller: caller(context))
            return ["ok": true]
        }
        router.register(IdentityAccountContract.confirmEmailChange) { params, context in
            let email = try service.confirmEmailChange(token: try params.string("token", maxLength: tokenMaxBytes), caller: caller(context))
            return ["ok": true, "email": .string(email)]
        }
        router.register(IdentityAccountContract.revertEmailChange) { params, context in
            let email = try service.revertEmailChange(token: try params.string("token", maxLength: tokenMaxBytes), caller: caller(context))
            return ["ok": true, "email": .string(email)]
        }
    }

    private static func caller(_ context: CallContext) -> Caller { Caller(client: context.client) }
}
