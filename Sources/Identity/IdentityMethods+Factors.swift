import LineProtocol
import ServiceKit

/// The method table of the factors identity checks itself: authenticator apps (TOTP), recovery
/// codes, and device-key signatures over another service's bytes (internal). Each method
/// refuses parameters it does not know.
extension IdentityMethods {
    static func registerFactors(_ router: Router, _ service: IdentityService) {
        router.register("identity.totp_enroll") { params, context in
            try only(params, ["session"])
            let enrollment = try service.totpEnroll(token: try params.string("session", maxLength: tokenMaxBytes), caller: Caller(client: context.client))
            return ["secret": .string(enrollment.secret), "uri": .string(enrollment.uri)]
        }
        router.register("identity.totp_activate") { params, context in
            try only(params, ["session", "code"])
            try service.totpActivate(
                token: try params.string("session", maxLength: tokenMaxBytes), code: try params.string("code", maxLength: 16),
                caller: Caller(client: context.client))
            return ["ok": true]
        }
        router.register("identity.totp_verify") { params, context in
            try only(params, ["session", "code"])
            let aal = try service.totpVerify(
                token: try params.string("session", maxLength: tokenMaxBytes), code: try params.string("code", maxLength: 16),
                caller: Caller(client: context.client))
            return ["aal": .int(Int64(aal))]
        }
        router.register("identity.totp_remove") { params, context in
            try only(params, ["session"])
            try service.totpRemove(token: try params.string("session", maxLength: tokenMaxBytes), caller: Caller(client: context.client))
            return ["ok": true]
        }
        router.register("identity.recovery_codes") { params, context in
            try only(params, ["session"])
            let codes = try service.recoveryCodes(token: try params.string("session", maxLength: tokenMaxBytes), caller: Caller(client: context.client))
            return ["codes": .array(codes.map(JSON.string))]
        }
        router.register("identity.recovery_verify") { params, context in
            try only(params, ["session", "code"])
            let passed = try service.recoveryVerify(
                token: try params.string("session", maxLength: tokenMaxBytes), code: try params.string("code", maxLength: 32),
                caller: Caller(client: context.client))
            return ["aal": .int(Int64(passed.aal)), "remaining": .int(Int64(passed.remaining))]
        }
        router.register("identity.verify_signature") { params, context in
            try only(params, ["user_id", "device_id", "message", "signature"])
            let keyID = try service.verifySignature(
                userID: try params.string("user_id", maxLength: idMaxBytes), deviceID: try params.string("device_id", maxLength: idMaxBytes),
                message: try params.string("message", maxLength: 2048), signature: try params.string("signature", maxLength: 256),
                caller: Caller(client: context.client))
            return ["ok": true, "key_id": .string(keyID)]
        }
    }

    /// `invalid_params` naming the first parameter not in `known` (a misspelt one would
    /// otherwise be ignored in silence).
    static func only(_ params: Params, _ known: Set<String>) throws(RPCError) {
        guard let unknown = params.members.keys.sorted().first(where: { !known.contains($0) }) else { return }
        let name = unknown.utf8.count <= 64 ? unknown : "(a long name)"
        throw RPCError.invalidParams("unknown parameter \(name)", field: name)
    }
}
