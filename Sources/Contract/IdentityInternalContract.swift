import LineProtocol

/// What other services ask identity: sessions, profiles, factors they check, records.
public enum IdentityInternalContract {
    public static let introspect = MethodContract(
        "identity.introspect", .internal, retry: .safe,
        summary: "A session's user, device and assurance; with_proven_phone adds the proven phone (accounts' codes).",
        params: [Fields.session, Member("with_proven_phone", .boolean, .optional)],
        result: [
            Fields.userID, Fields.sessionID, Fields.deviceID, Fields.aal, Member("aal2_at", .nullable(.timestamp)),
            Member("expires_at", .timestamp), Member("required_factors", Fields.factorNames), Member("step_up_until", .nullable(.timestamp)),
            Member("proven_phone", .nullable(.string), .optional), Member("phone_cooling_off_until", .nullable(.timestamp), .optional),
        ],
        errors: [.unauthenticated])
    public static let user = MethodContract(
        "identity.user", .internal, retry: .safe, summary: "A user's profile.", params: [Fields.userID],
        result: [
            Fields.userID, Member("username", .string), Member("email", .string), Member("phone", .string),
            Member("sms_verification", .boolean), Member("phone_verified", .boolean), Member("email_verified", .boolean),
            Fields.locale.optional,
        ],
        errors: [.notFound])
    public static let provePhone = MethodContract(
        "identity.prove_phone", .internal, retry: .safe, summary: "Marks the user's phone proved (a phone_proof code passed).",
        params: [Fields.userID, Fields.phone], result: [Member("phone_verified", .boolean)], errors: [.notFound, .conflict])
    public static let elevate = MethodContract(
        "identity.elevate", .internal, retry: .safe, summary: "A factor passed elsewhere raises the session's assurance.",
        params: [Fields.sessionID, Member("factor", .string(maxBytes: 32))], result: [Fields.aal], errors: [.notFound])
    public static let findByEmail = MethodContract(
        "identity.find_by_email", .internal, retry: .safe, summary: "The user with this address (reset).", params: [Fields.email],
        result: [Fields.userID], errors: [.notFound])
    public static let checkPassword = MethodContract(
        "identity.check_password", .internal, retry: .safe, summary: "Whether a new password passes the policy for this user.",
        params: [Fields.userID, Fields.password], result: [Fields.ok], errors: [.weakPassword])
    public static let setPassword = MethodContract(
        "identity.set_password", .internal, retry: .safe, summary: "Sets a new password (reset).", params: [Fields.userID, Fields.password],
        result: [Fields.ok], errors: [.weakPassword, .notFound])
    public static let revokeAll = MethodContract(
        "identity.revoke_all", .internal, retry: .safe, summary: "Ends every session of the user.", params: [Fields.userID],
        result: [Member("revoked", .integer(minimum: 0))])
    public static let revokeDevices = MethodContract(
        "identity.revoke_devices", .internal, retry: .safe,
        summary: "After a reset: removes device keys and device tokens, and factors added recently.", params: [Fields.userID],
        result: [
            Member("keys", .integer(minimum: 0)), Member("device_tokens", .integer(minimum: 0)), Member("removed_factors", Fields.factorNames),
        ],
        errors: [.notFound])
    public static let record = MethodContract(
        "identity.record", .internal, retry: .neverSent, summary: "Adds an event to the user's activity.",
        params: [
            Fields.userID, Member("event", .string(maxBytes: 64)), Member("outcome", .string(maxBytes: 64)), Fields.deviceID.optional,
        ],
        result: [Fields.ok], errors: [.notFound])
    public static let verifySignature = MethodContract(
        "identity.verify_signature", .internal, retry: .neverSent,
        summary: "Checks a device-key signature over another service's bytes (a transfer's).",
        params: [Fields.userID, Fields.deviceID, Member("message", .string(maxBytes: 2048)), Fields.keySignature, Fields.appAttestAssertion],
        result: [Fields.ok, Fields.keyID], errors: [.notFound, .invalidCredentials])

    static let all = [introspect, user, provePhone, elevate, findByEmail, checkPassword, setPassword, revokeAll, revokeDevices, record, verifySignature]
}

/// The operator's actions on a user, through the `latchkey` tool.
public enum IdentityOperatorContract {
    public static let findByUsername = MethodContract(
        "identity.find_by_username", .operator, retry: .safe, summary: "The user with this username.", params: [Fields.username],
        result: [Fields.userID, Member("username", .string)], errors: [.notFound])
    public static let unlock = MethodContract(
        "identity.operator_unlock", .operator, retry: .safe, summary: "Clears the user's failed logins.", params: [Fields.userID],
        result: [Member("failures_cleared", .integer(minimum: 0)), Member("was_locked", .boolean)], errors: [.notFound])
    public static let sessions = MethodContract(
        "identity.operator_sessions", .operator, retry: .safe, summary: "The user's live sessions.", params: [Fields.userID],
        result: [Member("sessions", .array(.object(IdentityContract.sessionEntry)))], errors: [.notFound])
    public static let revokeSession = MethodContract(
        "identity.operator_revoke_session", .operator, retry: .safe, summary: "Ends one session of the user, or all (exactly one of the two).",
        params: [Fields.userID, Fields.sessionID.optional, Member("all", .boolean, .optional)],
        result: [Member("revoked", .integer(minimum: 0))], errors: [.notFound])
    public static let keys = MethodContract(
        "identity.operator_keys", .operator, retry: .safe, summary: "The user's device keys.", params: [Fields.userID],
        result: [Member("keys", .array(IdentityContract.keyEntry))], errors: [.notFound])
    public static let revokeKey = MethodContract(
        "identity.operator_revoke_key", .operator, retry: .safe, summary: "Removes one device key of the user.",
        params: [Fields.userID, Fields.keyID], result: [Fields.ok], errors: [.notFound])
    public static let activity = MethodContract(
        "identity.operator_activity", .operator, retry: .safe, summary: "The user's recent activity.", params: [Fields.userID, Fields.limit],
        result: [Member("events", .array(IdentityContract.activityEntry))], errors: [.notFound])

    public static let verifyEmail = MethodContract(
        "identity.operator_verify_email", .operator, retry: .safe, summary: "Marks the user's current address verified.", params: [Fields.userID],
        result: [Member("email_verified", .boolean), Member("changed", .boolean)], errors: [.notFound])

    static let all = [findByUsername, unlock, sessions, revokeSession, keys, revokeKey, activity, verifyEmail]
}
