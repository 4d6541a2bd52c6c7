import LineProtocol

/// A signed-in user's changes to the account itself: the password and the e-mail address.
public enum IdentityAccountContract {
    /// A mailed link's token (`lke_` and 43 base64url characters).
    static let linkToken = Member("token", .string(maxBytes: 128))

    public static let changePassword = MethodContract(
        "identity.change_password", .recentStepUp, group: .auth, retry: .neverSent,
        summary: "Changes the password (the current one is checked on the login budget); every other session and device token ends.",
        params: [Fields.session, Member("current_password", .string(maxBytes: 1024)), Member("new_password", .string(maxBytes: 1024))],
        result: [Fields.ok, Member("sessions_ended", .integer(minimum: 0))],
        errors: [.unauthenticated, .stepUpRequired, .invalidCredentials, .locked, .weakPassword])
    public static let verifyEmail = MethodContract(
        "identity.verify_email", .open, group: .reset, retry: .neverSent, summary: "Proves the account's address with the link mailed to it.",
        params: [linkToken], result: [Fields.ok, Member("email", .string)], errors: [.invalidToken])
    public static let resendVerification = MethodContract(
        "identity.resend_verification", .session, group: .reset, retry: .neverSent,
        summary: "Mails a new verification link (earlier ones stop working); at most one a minute.", params: [Fields.session],
        result: [Fields.ok], errors: [.unauthenticated, .stepUpRequired, .conflict])
    public static let changeEmail = MethodContract(
        "identity.change_email", .recentStepUp, group: .reset, retry: .neverSent,
        summary: "Starts an address change: a link to the new address applies it, the old one is told at once and can undo it.",
        params: [Fields.session, Fields.email], result: [Fields.ok], errors: [.unauthenticated, .stepUpRequired])
    public static let confirmEmailChange = MethodContract(
        "identity.confirm_email_change", .open, group: .reset, retry: .neverSent, summary: "Applies an address change with the link mailed to the new address.",
        params: [linkToken], result: [Fields.ok, Member("email", .string)], errors: [.invalidToken, .conflict])
    public static let revertEmailChange = MethodContract(
        "identity.revert_email_change", .open, group: .reset, retry: .neverSent,
        summary: "Undoes an address change with the link mailed to the old address; every session and device token ends.",
        params: [linkToken], result: [Fields.ok, Member("email", .string)], errors: [.invalidToken, .conflict])

    public static let changePhone = MethodContract(
        "identity.change_phone", .recentStepUp, retry: .neverSent,
        summary: "Puts another phone number on the profile: unproven until a proof code passes; SMS confirms no money for the cooling-off.",
        params: [Fields.session, Fields.phone], result: [Fields.ok, Member("phone_verified", .boolean)],
        errors: [.unauthenticated, .stepUpRequired])

    static let all = [changePhone, changePassword, verifyEmail, resendVerification, changeEmail, confirmEmailChange, revertEmailChange]
}
