import Contract
import LineProtocol
import RPC

/// The operator's internal methods (`latchkey unlock`, `sessions`, `revoke-session`, `keys`,
/// `revoke-key`, `activity`, and the username lookup `latchkey deposit` needs). Never in the
/// gateway's policy table, so never reachable from outside; with `--service-token` set they
/// need it like every internal method. See protocol/identity.md, "Operator methods".
enum IdentityOperatorMethods {
    static func register(_ router: Router, _ service: IdentityService) {
        let idMaxBytes = IdentityMethods.idMaxBytes
        router.register(IdentityOperatorContract.findByUsername) { params, _ in
            let user = try service.findByUsername(try params.string("username", maxLength: 256))
            return ["user_id": .string(user.userID), "username": .string(user.username)]
        }
        router.register(IdentityOperatorContract.unlock) { params, context in
            let cleared = try service.operatorUnlock(userID: try params.string("user_id", maxLength: idMaxBytes), caller: caller(context))
            return ["failures_cleared": .int(Int64(cleared.consecutiveFailures)), "was_locked": .bool(cleared.wasLocked)]
        }
        router.register(IdentityOperatorContract.sessions) { params, _ in
            let sessions = try service.operatorSessions(userID: try params.string("user_id", maxLength: idMaxBytes))
            return ["sessions": .array(sessions.map { session in
                [
                    "session_id": .string(session.sessionID), "device_id": .string(session.deviceID), "aal": .int(Int64(session.aal)),
                    "created_at": .int(session.createdAt), "last_seen_at": .int(session.lastSeenAt), "expires_at": .int(session.expiresAt),
                ]
            })]
        }
        router.register(IdentityOperatorContract.revokeSession) { params, context in
            let userID = try params.string("user_id", maxLength: idMaxBytes)
            let sessionID = try params.optionalString("session_id", maxLength: idMaxBytes)
            let all = try params.optionalBool("all") ?? false
            guard (sessionID != nil) != all else {
                throw RPCError.invalidParams("give session_id or all: true (exactly one of the two)", field: sessionID == nil ? "session_id" : "all")
            }
            if let sessionID {
                try service.operatorRevokeSession(userID: userID, sessionID: sessionID, caller: caller(context))
                return ["revoked": 1]
            }
            return ["revoked": .int(Int64(try service.operatorRevokeAllSessions(userID: userID, caller: caller(context))))]
        }
        router.register(IdentityOperatorContract.keys) { params, _ in
            let keys = try service.operatorKeys(userID: try params.string("user_id", maxLength: idMaxBytes))
            return ["keys": .array(keys.map(\.json))]
        }
        router.register(IdentityOperatorContract.revokeKey) { params, context in
            try service.operatorRevokeKey(
                userID: try params.string("user_id", maxLength: idMaxBytes), keyID: try params.string("key_id", maxLength: idMaxBytes),
                caller: caller(context))
            return ["ok": true]
        }
        router.register(IdentityOperatorContract.activity) { params, _ in
            let limit = try params.optionalInt("limit", range: 1...Int64(service.settings.maxActivityLimit)) ?? 20
            let events = try service.operatorActivity(userID: try params.string("user_id", maxLength: idMaxBytes), limit: Int(limit))
            return ["events": .array(events.map { $0.json(service.activitySeals) })]
        }
        router.register(IdentityOperatorContract.verifyEmail) { params, context in
            let changed = try service.operatorVerifyEmail(userID: try params.string("user_id", maxLength: idMaxBytes), caller: caller(context))
            return ["email_verified": true, "changed": .bool(changed)]
        }
    }

    private static func caller(_ context: CallContext) -> Caller { Caller(client: context.client) }
}
