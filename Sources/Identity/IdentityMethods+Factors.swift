import Contract
import LineProtocol
import RPC

/// The method table of the factors identity checks itself: authenticator apps (TOTP), recovery
/// codes, and device-key signatures over another service's bytes (internal). The router
/// refuses parameters a method does not take (`accepts:`).
extension IdentityMethods {
    static func registerFactors(_ router: Router, _ service: IdentityService) {
        router.register(IdentityFactorsContract.totpEnroll) { params, context in
            let enrollment = try service.totpEnroll(token: try params.string("session", maxLength: tokenMaxBytes), caller: Caller(client: context.client))
            return ["secret": .string(enrollment.secret), "uri": .string(enrollment.uri)]
        }
        router.register(IdentityFactorsContract.totpActivate) { params, context in
            try service.totpActivate(
                token: try params.string("session", maxLength: tokenMaxBytes), code: try params.string("code", maxLength: 16),
                caller: Caller(client: context.client))
            return ["ok": true]
        }
        router.register(IdentityFactorsContract.totpVerify) { params, context in
            let aal = try service.totpVerify(
                token: try params.string("session", maxLength: tokenMaxBytes), code: try params.string("code", maxLength: 16),
                caller: Caller(client: context.client))
            return ["aal": .int(Int64(aal))]
        }
        router.register(IdentityFactorsContract.totpRemove) { params, context in
            try service.totpRemove(token: try params.string("session", maxLength: tokenMaxBytes), caller: Caller(client: context.client))
            return ["ok": true]
        }
        router.register(IdentityFactorsContract.recoveryCodes) { params, context in
            let codes = try service.recoveryCodes(token: try params.string("session", maxLength: tokenMaxBytes), caller: Caller(client: context.client))
            return ["codes": .array(codes.map(JSON.string))]
        }
        router.register(IdentityFactorsContract.recoveryVerify) { params, context in
            let passed = try service.recoveryVerify(
                token: try params.string("session", maxLength: tokenMaxBytes), code: try params.string("code", maxLength: 32),
                caller: Caller(client: context.client))
            return ["aal": .int(Int64(passed.aal)), "remaining": .int(Int64(passed.remaining))]
        }
        router.register(IdentityInternalContract.verifySignature) { params, context in
            let keyID = try service.verifySignature(
                userID: try params.string("user_id", maxLength: idMaxBytes), deviceID: try params.string("device_id", maxLength: idMaxBytes),
                message: try params.string("message", maxLength: 2048), signature: try params.string("signature", maxLength: 256),
                appAttestAssertion: try params.optionalString("app_attest_assertion", maxLength: 1024), caller: Caller(client: context.client))
            return ["ok": true, "key_id": .string(keyID)]
        }
    }
}
