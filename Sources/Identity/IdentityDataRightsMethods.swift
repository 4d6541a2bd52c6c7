import Contract
import LineProtocol
import RPC

/// The user's rights over their data: the copy (`identity.export`, identity's part) and the
/// deletion (the user's request, the followers' reports, the operator's look).
enum IdentityDataRightsMethods {
    static func register(_ router: Router, _ service: IdentityService) {
        router.register(AccountDeletionContract.deleteAccount) { params, context in
            let recorded = try service.requestDeletion(
                token: try params.string("session", maxLength: IdentityMethods.tokenMaxBytes),
                password: try params.string("password", maxLength: IdentityMethods.passwordMaxBytes), caller: Caller(client: context.client))
            // Accounts' follower decides within a poll or two: wait for it, within the request's time.
            let wait = min(service.settings.deletionWaitMilliseconds, max(0, context.remainingMilliseconds - 500))
            let record = try await service.deletionOutcome(userID: recorded.userID, waitMilliseconds: wait)
            if record.state == .blocked {
                throw RPCError(
                    .conflict, "money is left in your accounts; the deletion completes once it is paid out (contact support)",
                    extra: ["detail": .string(record.detail ?? "balance_not_zero"), "balances": record.balances ?? .array([])])
            }
            return ["ok": true, "state": .string(record.state.rawValue)]
        }
        router.register(DataExportContract.export) { params, _ in
            try service.exportData(token: try params.string("session", maxLength: IdentityMethods.tokenMaxBytes))
        }
        router.register(AccountDeletionContract.erasuresDue) { params, _ in
            let due = try service.erasuresDue(service: try params.string("service", maxLength: 32), limit: Int(try params.optionalInt("limit", range: 1...100) ?? 16))
            return ["erasures": .array(due.map(\.erasureJSON))]
        }
        router.register(AccountDeletionContract.erasureDone) { params, _ in
            let refused = try params.string("outcome", maxLength: 16) == "refused"
            let record = try service.erasureReported(
                service: try params.string("service", maxLength: 32), userID: try params.string("user_id", maxLength: 128),
                refusal: refused ? (try params.optionalString("detail", maxLength: 64) ?? "refused", params.members["balances"]) : nil)
            return ["ok": true, "state": .string(record.state.rawValue)]
        }
        router.register(AccountDeletionContract.operatorDeletions) { params, _ in
            let records = try service.store.unfinishedDeletions(limit: Int(try params.optionalInt("limit", range: 1...1000) ?? 100))
            return ["deletions": .array(records.map(\.operatorJSON))]
        }
        router.register(AccountDeletionContract.operatorDeletion) { params, _ in
            guard let record = try service.store.deletion(userID: try params.string("user_id", maxLength: 128)) else {
                throw IdentityError.notFound("no deletion of this user")
            }
            return ["deletion": record.operatorJSON]
        }
        router.register(AccountDeletionContract.operatorResumeDeletion) { params, _ in
            let record = try service.resumeDeletion(userID: try params.string("user_id", maxLength: 128))
            return ["ok": true, "state": .string(record.state.rawValue)]
        }
    }
}
