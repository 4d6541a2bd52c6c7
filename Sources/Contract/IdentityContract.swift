import LineProtocol

/// Identity's public methods: accounts, sessions and device keys.
public enum IdentityContract {
    static let loginResult = [
        Fields.session, Fields.sessionID, Fields.aal, Member("required_factors", Fields.factorNames),
        Member("sitekey", .nullable(.string)), Member("device_token", .string, .optional),
    ]
    static let keyEntry = Schema.object([
        Fields.keyID, Fields.deviceID, Member("protection", .string(values: ["biometry", "user_presence"])),
        Member("created_at", .timestamp), Member("last_used_at", .nullable(.timestamp)),
        Member("app_attest", .nullable(.object([Member("app_id", .string), Member("environment", .string(values: ["development", "production"]))]))),
    ])
    static let activityEntry = Schema.object([
        Member("event_id", .string), Member("event", .string), Member("outcome", .string), Member("at", .timestamp),
        Member("device_id", .nullable(.string)), Member("client", .nullable(.string)),
    ])
    static let sessionEntry = [
        Fields.sessionID, Fields.deviceID, Fields.aal, Member("created_at", .timestamp), Member("last_seen_at", .timestamp),
        Member("expires_at", .timestamp),
    ]
    /// A small image (PNG, JPEG, GIF or WebP, at most --sitekey-max-bytes) in base64 or
    /// base64url; null removes it. The pattern describes the PNG form, the one the app sends.
    static let sitekey = Member(
        "sitekey", .nullable(.string(maxBytes: 21_852, pattern: "^iVBORw[A-Za-z0-9_-]{2}([A-Za-z0-9_-]{4})*$")), .optional)

    /// An App Attest key vouching for what is enrolled (`DCAppAttestService`'s key id and
    /// attestation, base64, and the challenge of `identity.app_attest_challenge`).
    static let appAttest = Member(
        "app_attest",
        .object([Member("key_id", .string(maxBytes: 64)), Member("attestation", .string(maxBytes: 16_384)), Fields.keyChallenge]), .optional)

    /// The language of the account's mails (English when not given).
    static let locale = Fields.locale.optional

    public static let register = MethodContract(
        "identity.register", .open, group: .auth, retry: .neverSent, summary: "Creates a user.",
        params: [Fields.newUsername, Fields.password, Fields.email, Fields.phone, locale], result: [Fields.userID],
        errors: [.weakPassword, .conflict])
    public static let login = MethodContract(
        "identity.login", .open, group: .auth, retry: .neverSent,
        summary: "Password sign-in on a device; a device token from an earlier login on it skips the second factor.",
        params: [Fields.username, Fields.password, Fields.deviceID, Member("device_token", .string(maxBytes: 128), .optional)],
        result: loginResult, errors: [.invalidCredentials, .locked])
    public static let preferences = MethodContract(
        "identity.preferences", .session, retry: .neverSent, summary: "Reads the user's preferences and changes those given.",
        params: [Fields.session, Member("sms_verification", .boolean, .optional), sitekey, locale],
        result: [
            Member("sms_verification", .boolean), Member("sitekey", .nullable(.string)), Member("factors", Fields.factorNames),
            Member("recovery_codes_left", .integer(minimum: 0)), Member("email", .string), Member("email_verified", .boolean),
            Fields.locale,
        ],
        errors: [.unauthenticated, .stepUpRequired])
    public static let activity = MethodContract(
        "identity.activity", .session, retry: .safe, summary: "The user's recent security events, newest first.",
        params: [Fields.session, Fields.limit, Fields.before], result: [Member("events", .array(activityEntry)), Fields.next],
        errors: [.unauthenticated, .stepUpRequired])
    public static let logout = MethodContract(
        "identity.logout", .owesFactorsAllowed, retry: .safe, summary: "Ends the caller's session.", params: [Fields.session],
        result: [Fields.ok], errors: [.unauthenticated], cacheEffect: .dropCallerSession)
    public static let sessions = MethodContract(
        "identity.sessions", .owesFactorsAllowed, retry: .safe, summary: "The user's live sessions; the caller's own says what it owes.",
        params: [Fields.session],
        result: [
            Member(
                "sessions",
                .array(.object(sessionEntry + [Member("current", .boolean), Member("required_factors", Fields.factorNames, .optional)])))
        ],
        errors: [.unauthenticated])
    public static let revoke = MethodContract(
        "identity.revoke", .recentStepUp, retry: .safe, summary: "Ends another session of the user.",
        params: [Fields.session, Fields.sessionID], result: [Fields.ok], errors: [.unauthenticated, .notFound, .stepUpRequired],
        cacheEffect: .dropSessionID(param: "session_id"))
    public static let challenge = MethodContract(
        "identity.challenge", .open, group: .auth, retry: .safe,
        summary: "A single-use challenge for a device-key signature (key login with username, step-up with session).",
        params: [Fields.deviceID, Fields.session.optional, Fields.username.optional],
        result: [Member("challenge", .string), Member("expires_at", .timestamp)], errors: [.unauthenticated])
    public static let appAttestChallenge = MethodContract(
        "identity.app_attest_challenge", .session, retry: .safe,
        summary: "A single-use challenge for an App Attest attestation of the device key about to be enrolled.", params: [Fields.session],
        result: [Member("challenge", .string), Member("expires_at", .timestamp)], errors: [.unauthenticated, .stepUpRequired, .conflict])
    public static let enrollKey = MethodContract(
        "identity.enroll_key", .recentStepUp, retry: .neverSent, summary: "Enrols a device's P-256 public key.",
        params: [
            Fields.session, Fields.deviceID, Member("public_key", .string(maxBytes: 256)),
            Member("protection", .string(maxBytes: 32, values: ["biometry", "user_presence"])),
            appAttest,
        ],
        result: [Fields.keyID], errors: [.unauthenticated, .stepUpRequired, .conflict, .invalidToken, .invalidCredentials])
    public static let verifyKey = MethodContract(
        "identity.verify_key", .owesFactorsAllowed, group: .auth, retry: .neverSent,
        summary: "Pays a factor the session owes (or refreshes its step-up) with a device-key signature.",
        params: [Fields.session, Fields.deviceID, Fields.keyChallenge, Fields.keySignature, Fields.appAttestAssertion], result: [Fields.aal],
        errors: [.unauthenticated, .invalidToken, .invalidCredentials, .notFound], cacheEffect: .dropCallerSession)
    public static let keyLogin = MethodContract(
        "identity.key_login", .open, group: .auth, retry: .neverSent, summary: "Sign-in with a device-key signature.",
        params: [Fields.username, Fields.deviceID, Fields.keyChallenge, Fields.keySignature, Fields.appAttestAssertion], result: loginResult,
        errors: [.invalidToken, .invalidCredentials])
    public static let keys = MethodContract(
        "identity.keys", .session, retry: .safe, summary: "The user's device keys (never their material).", params: [Fields.session],
        result: [Member("keys", .array(keyEntry))], errors: [.unauthenticated, .stepUpRequired])
    public static let revokeKey = MethodContract(
        "identity.revoke_key", .recentStepUp, retry: .safe, summary: "Removes a device key.", params: [Fields.session, Fields.keyID],
        result: [Fields.ok], errors: [.unauthenticated, .notFound, .stepUpRequired], cacheEffect: .dropCallerSession)

    static let all = [register, login, preferences, activity, logout, sessions, revoke, challenge, appAttestChallenge, enrollKey, verifyKey, keyLogin, keys, revokeKey]
}
