import Contract
import LineProtocol
import RPC

/// The passkey ceremonies and the user's list: typed params in, `IdentityService` called, the
/// WebAuthn JSON forms out.
enum IdentityPasskeyMethods {
    static func register(_ router: Router, _ service: IdentityService) {
        let tokenMaxBytes = IdentityMethods.tokenMaxBytes
        router.register(IdentityPasskeyContract.registerOptions) { params, _ in
            try service.passkeyRegisterOptions(token: try params.string("session", maxLength: tokenMaxBytes))
        }
        router.register(IdentityPasskeyContract.register) { params, context in
            let passkeyID = try service.passkeyRegister(
                token: try params.string("session", maxLength: tokenMaxBytes), credential: try PasskeyCredential(registration: try credential(params)),
                name: try params.optionalString("name", maxLength: 64), appAttest: try IdentityMethods.appAttest(params), caller: caller(context))
            return ["passkey_id": .string(passkeyID)]
        }
        router.register(IdentityPasskeyContract.loginOptions) { params, context in
            try service.passkeyLoginOptions(username: try params.optionalString("username", maxLength: 256), caller: caller(context))
        }
        router.register(IdentityPasskeyContract.login) { params, context in
            IdentityMethods.loginJSON(
                try service.passkeyLogin(
                    credential: try PasskeyCredential(assertion: try credential(params)),
                    deviceID: try params.string("device_id", maxLength: IdentityMethods.idMaxBytes),
                    deviceToken: try params.optionalString("device_token", maxLength: tokenMaxBytes), caller: caller(context)))
        }
        router.register(IdentityPasskeyContract.verifyOptions) { params, _ in
            try service.passkeyVerifyOptions(token: try params.string("session", maxLength: tokenMaxBytes))
        }
        router.register(IdentityPasskeyContract.verify) { params, context in
            let aal = try service.passkeyVerify(
                token: try params.string("session", maxLength: tokenMaxBytes), credential: try PasskeyCredential(assertion: try credential(params)),
                caller: caller(context))
            return ["aal": .int(Int64(aal))]
        }
        router.register(IdentityPasskeyContract.passkeys) { params, _ in
            ["passkeys": .array(try service.passkeys(token: try params.string("session", maxLength: tokenMaxBytes)).map(\.json))]
        }
        router.register(IdentityPasskeyContract.revoke) { params, context in
            try service.revokePasskey(
                token: try params.string("session", maxLength: tokenMaxBytes),
                passkeyID: try params.string("passkey_id", maxLength: IdentityMethods.idMaxBytes), caller: caller(context))
            return ["ok": true]
        }
    }

    private static func credential(_ params: Params) throws -> [String: JSON] {
        guard let credential = try params.optionalObject("credential") else {
            throw IdentityError.invalidField("credential", "credential must be the ceremony's response object")
        }
        return credential
    }

    private static func caller(_ context: CallContext) -> Caller { Caller(client: context.client) }
}

extension PasskeyRecord {
    /// The user's view of a passkey: never its key or its credential id.
    var json: JSON {
        let aaguidText = KnownAuthenticators.text(aaguid)
        return [
            "passkey_id": .string(passkeyID), "name": .string(name), "created_at": .int(createdAt), "last_used_at": lastUsedAt.map(JSON.int) ?? .null,
            "backup_eligible": .bool(backupEligible), "backed_up": .bool(backedUp), "aaguid": .string(aaguidText),
            "authenticator": KnownAuthenticators.names[aaguidText].map(JSON.string) ?? .null, "attestation": .string(attestation),
            "flagged": .bool(flaggedAt != nil),
            "app_attest": attestedBy.map { ["app_id": .string($0.appID), "environment": .string($0.environment)] } ?? .null,
        ]
    }
}
