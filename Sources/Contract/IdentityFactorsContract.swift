import LineProtocol

/// The factors identity checks itself: authenticator apps (TOTP) and recovery codes.
public enum IdentityFactorsContract {
    /// The six digits an authenticator app shows.
    static let code = Member("code", .string(maxBytes: 16, pattern: "^[0-9]{6}$"))
    /// Ten of the code alphabet, any case, dashes and spaces anywhere (i, l and o read as 1, 1 and 0).
    static let recoveryCode = Member("code", .string(maxBytes: 32, pattern: "^[ -]*([0-9a-tv-zA-TV-Z][ -]*){10}$"))

    public static let totpEnroll = MethodContract(
        "identity.totp_enroll", .recentStepUp, retry: .neverSent, summary: "A new authenticator secret, pending until activated.",
        params: [Fields.session], result: [Member("secret", .string), Member("uri", .string)],
        errors: [.unauthenticated, .stepUpRequired, .conflict])
    public static let totpActivate = MethodContract(
        "identity.totp_activate", .recentStepUp, group: .auth, retry: .neverSent, summary: "Activates the pending secret with its first code.",
        params: [Fields.session, code], result: [Fields.ok], errors: [.unauthenticated, .stepUpRequired, .notFound, .invalidCode, .locked])
    public static let totpVerify = MethodContract(
        "identity.totp_verify", .owesFactorsAllowed, group: .auth, retry: .neverSent, summary: "Pays a factor with an authenticator code.",
        params: [Fields.session, code], result: [Fields.aal], errors: [.unauthenticated, .notFound, .invalidCode, .locked],
        cacheEffect: .dropCallerSession)
    public static let totpRemove = MethodContract(
        "identity.totp_remove", .recentStepUp, retry: .safe, summary: "Removes the authenticator.", params: [Fields.session],
        result: [Fields.ok], errors: [.unauthenticated, .stepUpRequired, .notFound])
    public static let recoveryCodes = MethodContract(
        "identity.recovery_codes", .recentStepUp, retry: .neverSent, summary: "A new set of recovery codes (the old set ends).",
        params: [Fields.session], result: [Member("codes", .array(.string))], errors: [.unauthenticated, .stepUpRequired])
    public static let recoveryVerify = MethodContract(
        "identity.recovery_verify", .owesFactorsAllowed, group: .auth, retry: .neverSent, summary: "Pays a factor with a recovery code.",
        params: [Fields.session, recoveryCode], result: [Fields.aal, Member("remaining", .integer(minimum: 0))],
        errors: [.unauthenticated, .invalidCode, .locked], cacheEffect: .dropCallerSession)

    static let all = [totpEnroll, totpActivate, totpVerify, totpRemove, recoveryCodes, recoveryVerify]
}
