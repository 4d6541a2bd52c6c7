import Contract
import Delivery
import FoundationEssentials
import LineProtocol
import RPC
import Secrets

/// The method table: reads typed params, calls `IdentityService`, shapes the JSON answer.
/// Nothing here decides what a method means.
public enum IdentityMethods {
    static let passwordMaxBytes = 1024
    static let tokenMaxBytes = 128
    static let idMaxBytes = 128

    public static func register(on router: Router, service: IdentityService) {
        registerAccount(router, service)
        IdentityAccountMethods.register(router, service)
        IdentityDataRightsMethods.register(router, service)
        registerSessions(router, service)
        registerKeys(router, service)
        registerFactors(router, service)
        IdentityPasskeyMethods.register(router, service)
        registerInternal(router, service)
        IdentityOperatorMethods.register(router, service)
    }

    private static func caller(_ context: CallContext) -> Caller { Caller(client: context.client) }

    private static func registerAccount(_ router: Router, _ service: IdentityService) {
        router.register(IdentityContract.register) { params, context in
            let userID = try service.register(
                .init(
                    username: try params.string("username", maxLength: 256), password: try params.string("password", maxLength: passwordMaxBytes),
                    email: try params.string("email", maxLength: 512), phone: try params.string("phone", maxLength: 64),
                    locale: try mailLocale(params) ?? .english),
                caller: caller(context))
            return ["user_id": .string(userID)]
        }
        router.register(IdentityContract.login) { params, context in
            let result = try service.login(
                username: try params.string("username", maxLength: 256), password: try params.string("password", maxLength: passwordMaxBytes),
                deviceID: try params.string("device_id", maxLength: idMaxBytes),
                deviceToken: try params.optionalString("device_token", maxLength: tokenMaxBytes), caller: caller(context))
            return loginJSON(result)
        }
        router.register(IdentityContract.preferences) { params, context in
            var sitekey: [UInt8]??
            switch params["sitekey"] {
            case nil: sitekey = nil
            case .null?: sitekey = .some(nil)
            case .string(let text)?:
                guard text.utf8.count <= 4 * service.settings.sitekeyMaxBytes / 3 + 4, let bytes = Base64URL.decode(text) else {
                    throw IdentityError.invalidField("sitekey", "sitekey must be a base64 image of at most \(service.settings.sitekeyMaxBytes) bytes, or null")
                }
                sitekey = .some(bytes)
            default: throw RPCError.invalidParams("sitekey must be a base64 string or null", field: "sitekey")
            }
            let preferences = try service.preferences(
                token: try params.string("session", maxLength: tokenMaxBytes), smsVerification: try params.optionalBool("sms_verification"),
                sitekey: sitekey, locale: try mailLocale(params), caller: caller(context))
            return [
                "sms_verification": .bool(preferences.smsVerification), "sitekey": sitekeyJSON(preferences.sitekey),
                "factors": .array(preferences.factors.map(JSON.string)), "recovery_codes_left": .int(Int64(preferences.recoveryCodesLeft)),
                "email": .string(preferences.email), "email_verified": .bool(preferences.emailVerified),
                "locale": .string(preferences.locale.rawValue),
            ]
        }
        router.register(IdentityContract.activity) { params, _ in
            let page = try service.activity(
                token: try params.string("session", maxLength: tokenMaxBytes),
                limit: Int(try params.optionalInt("limit", range: 1...Int64(service.settings.maxActivityLimit)) ?? 20),
                before: try PageCursor.before(params))
            return ["events": .array(page.events.map { $0.json(service.activitySeals) }), "next": page.next.map(JSON.string) ?? .null]
        }
    }

    /// `locale` as the contract took it (one of the catalogue's languages), or nil.
    private static func mailLocale(_ params: Params) throws -> MailLocale? {
        try params.optionalString("locale", maxLength: 8).flatMap(MailLocale.init(rawValue:))
    }

    private static func registerSessions(_ router: Router, _ service: IdentityService) {
        router.register(IdentityContract.logout) { params, context in
            try service.logout(token: try params.string("session", maxLength: tokenMaxBytes), caller: caller(context))
            return ["ok": true]
        }
        router.register(IdentityContract.sessions) { params, _ in
            let (current, assurance, all) = try service.sessions(token: try params.string("session", maxLength: tokenMaxBytes))
            return ["sessions": .array(all.map { session in
                var entry: [String: JSON] = [
                    "session_id": .string(session.sessionID), "device_id": .string(session.deviceID), "aal": .int(Int64(session.aal)),
                    "created_at": .int(session.createdAt), "last_seen_at": .int(session.lastSeenAt), "expires_at": .int(session.expiresAt),
                    "current": .bool(session.sessionID == current.sessionID),
                ]
                // The caller's own entry says what it still owes (what `identity.login` said, kept current).
                if session.sessionID == current.sessionID { entry["required_factors"] = .array(assurance.requiredFactors.map(JSON.string)) }
                return .object(entry)
            })]
        }
        router.register(IdentityContract.revoke) { params, context in
            try service.revoke(
                token: try params.string("session", maxLength: tokenMaxBytes), sessionID: try params.string("session_id", maxLength: idMaxBytes),
                caller: caller(context))
            return ["ok": true]
        }
    }

    private static func registerKeys(_ router: Router, _ service: IdentityService) {
        router.register(IdentityContract.challenge) { params, context in
            let issued = try service.challenge(
                deviceID: try params.string("device_id", maxLength: idMaxBytes),
                token: try params.optionalString("session", maxLength: tokenMaxBytes), username: try params.optionalString("username", maxLength: 256),
                caller: caller(context))
            return ["challenge": .string(issued.challenge), "expires_at": .int(issued.expiresAt)]
        }
        router.register(IdentityContract.enrollKey) { params, context in
            let keyID = try service.enrollKey(
                token: try params.string("session", maxLength: tokenMaxBytes), deviceID: try params.string("device_id", maxLength: idMaxBytes),
                publicKey: try params.string("public_key", maxLength: 256), protection: try params.string("protection", maxLength: 32),
                appAttest: try appAttest(params),
                caller: caller(context))
            return ["key_id": .string(keyID)]
        }
        router.register(IdentityContract.appAttestChallenge) { params, _ in
            let issued = try service.appAttestChallenge(token: try params.string("session", maxLength: tokenMaxBytes))
            return ["challenge": .string(issued.challenge), "expires_at": .int(issued.expiresAt)]
        }
        router.register(IdentityContract.verifyKey) { params, context in
            let aal = try service.verifyKey(
                token: try params.string("session", maxLength: tokenMaxBytes), deviceID: try params.string("device_id", maxLength: idMaxBytes),
                challenge: try params.string("challenge", maxLength: 128), signature: try params.string("signature", maxLength: 256),
                appAttestAssertion: try params.optionalString("app_attest_assertion", maxLength: 1024), caller: caller(context))
            return ["aal": .int(Int64(aal))]
        }
        router.register(IdentityContract.keyLogin) { params, context in
            let result = try service.keyLogin(
                username: try params.string("username", maxLength: 256), deviceID: try params.string("device_id", maxLength: idMaxBytes),
                challenge: try params.string("challenge", maxLength: 128), signature: try params.string("signature", maxLength: 256),
                appAttestAssertion: try params.optionalString("app_attest_assertion", maxLength: 1024), caller: caller(context))
            return loginJSON(result)
        }
        router.register(IdentityContract.keys) { params, _ in
            let keys = try service.keys(token: try params.string("session", maxLength: tokenMaxBytes))
            return ["keys": .array(keys.map(\.json))]
        }
        router.register(IdentityContract.revokeKey) { params, context in
            try service.revokeKey(
                token: try params.string("session", maxLength: tokenMaxBytes), keyID: try params.string("key_id", maxLength: idMaxBytes),
                caller: caller(context))
            return ["ok": true]
        }
    }

    private static func registerInternal(_ router: Router, _ service: IdentityService) {
        // `with_proven_phone`: accounts starts a transfer's code with the phone in hand, so
        // verification need not ask for the user's profile on every start.
        router.register(IdentityInternalContract.introspect) { params, _ in
            let session = try service.introspect(token: try params.string("session", maxLength: tokenMaxBytes))
            let assurance = try service.assurance(of: session)
            var answer: [String: JSON] = [
                "user_id": .string(session.userID), "session_id": .string(session.sessionID), "device_id": .string(session.deviceID),
                "aal": .int(Int64(session.aal)), "aal2_at": session.aal2At.map(JSON.int) ?? .null, "expires_at": .int(session.expiresAt),
                "required_factors": .array(assurance.requiredFactors.map(JSON.string)),
                "step_up_until": assurance.stepUpUntil.map(JSON.int) ?? .null,
            ]
            if try params.optionalBool("with_proven_phone") == true {
                answer["proven_phone"] = try service.provenPhone(userID: session.userID).map(JSON.string) ?? .null
                answer["phone_cooling_off_until"] = try service.store.user(id: session.userID).flatMap(service.phoneCoolingOffUntil).map(JSON.int) ?? .null
            }
            return .object(answer)
        }
        router.register(IdentityInternalContract.user) { params, _ in
            let user = try service.user(id: try params.string("user_id", maxLength: idMaxBytes))
            return [
                "user_id": .string(user.userID), "username": .string(user.username), "email": .string(user.email),
                "phone": .string(user.phone), "sms_verification": .bool(user.smsVerification),
                "phone_verified": .bool(try service.isPhoneProven(userID: user.userID)), "email_verified": .bool(user.emailVerifiedAt != nil),
                "locale": .string(user.locale.rawValue),
            ]
        }
        router.register(IdentityInternalContract.provePhone) { params, context in
            try service.provePhone(
                userID: try params.string("user_id", maxLength: idMaxBytes), phone: try params.string("phone", maxLength: 64), caller: caller(context))
            return ["phone_verified": true]
        }
        router.register(IdentityInternalContract.elevate) { params, context in
            let aal = try service.elevate(
                sessionID: try params.string("session_id", maxLength: idMaxBytes), factor: try params.string("factor", maxLength: 32),
                caller: caller(context))
            return ["aal": .int(Int64(aal))]
        }
        router.register(IdentityInternalContract.findByEmail) { params, _ in
            ["user_id": .string(try service.findByEmail(try params.string("email", maxLength: 512)))]
        }
        router.register(IdentityInternalContract.checkPassword) { params, _ in
            try service.checkPassword(
                userID: try params.string("user_id", maxLength: idMaxBytes), password: try params.string("password", maxLength: passwordMaxBytes))
            return ["ok": true]
        }
        router.register(IdentityInternalContract.setPassword) { params, context in
            try service.setPassword(
                userID: try params.string("user_id", maxLength: idMaxBytes), password: try params.string("password", maxLength: passwordMaxBytes),
                caller: caller(context))
            return ["ok": true]
        }
        router.register(IdentityInternalContract.revokeAll) { params, context in
            ["revoked": .int(Int64(try service.revokeAll(userID: try params.string("user_id", maxLength: idMaxBytes), caller: caller(context))))]
        }
        router.register(IdentityInternalContract.revokeDevices) { params, context in
            let cleanup = try service.cleanUpAfterReset(userID: try params.string("user_id", maxLength: idMaxBytes), caller: caller(context))
            return [
                "keys": .int(Int64(cleanup.keys)), "device_tokens": .int(Int64(cleanup.deviceTokens)),
                "removed_factors": .array(cleanup.recentFactors.map { .string($0) }),
            ]
        }
        router.register(IdentityInternalContract.record) { params, context in
            try service.record(
                userID: try params.string("user_id", maxLength: idMaxBytes), event: try params.string("event", maxLength: 64),
                outcome: try params.string("outcome", maxLength: 64), deviceID: try params.optionalString("device_id", maxLength: idMaxBytes),
                caller: caller(context))
            return ["ok": true]
        }
    }

    /// `app_attest`, whose members the router checked against the contract.
    static func appAttest(_ params: Params) throws -> AppAttestEnrollment? {
        try params.optionalObject("app_attest").map { attest in
            AppAttestEnrollment(
                keyID: attest["key_id"]?.stringValue ?? "", attestation: attest["attestation"]?.stringValue ?? "", challenge: attest["challenge"]?.stringValue ?? "")
        }
    }

    static func loginJSON(_ result: LoginResult) -> JSON {
        var json: [String: JSON] = [
            "session": .string(result.session), "session_id": .string(result.sessionID), "aal": .int(Int64(result.aal)),
            "required_factors": .array(result.requiredFactors.map(JSON.string)), "sitekey": sitekeyJSON(result.sitekey),
        ]
        if let deviceToken = result.deviceToken { json["device_token"] = .string(deviceToken) }
        return .object(json)
    }

    static func sitekeyJSON(_ bytes: [UInt8]?) -> JSON {
        bytes.map { .string(Data($0).base64EncodedString()) } ?? .null
    }
}
