import LineProtocol

/// Passkeys: identity as a WebAuthn Level 3 relying party. Options and responses keep the
/// specification's JSON forms (`PublicKeyCredentialCreationOptionsJSON`, `RegistrationResponseJSON`
/// and their assertion twins, camelCase as browsers and `toJSON()` write them); every binary
/// member is base64url without padding.
public enum IdentityPasskeyContract {
    static func base64URL(_ name: String, maxBytes: Int, _ presence: Member.Presence = .required) -> Member {
        Member(name, .string(maxBytes: maxBytes, pattern: "^[A-Za-z0-9_-]*$"), presence)
    }

    /// A credential id: at most 1,023 bytes (WebAuthn's limit), so 1,364 characters.
    static let credentialID = base64URL("id", maxBytes: 1364)
    static let rawID = base64URL("rawId", maxBytes: 1364)
    static let publicKeyType = Member("type", .string(values: ["public-key"]))
    static let attachment = Member("authenticatorAttachment", .nullable(.string(maxBytes: 32)), .optional)
    static let extensionResults = Member("clientExtensionResults", .anyObject, .optional)
    static let clientDataJSON = base64URL("clientDataJSON", maxBytes: 4096)
    static let transports = Member("transports", .array(.string(maxBytes: 32)), .optional)

    /// `RegistrationResponseJSON`: what `navigator.credentials.create()` gives (`toJSON()`), or the
    /// iOS app's `rawAttestationObject` and `rawClientDataJSON` in base64url.
    static let registrationResponse = Member(
        "credential",
        .object([
            credentialID, rawID, publicKeyType, attachment, extensionResults,
            Member(
                "response",
                .object([
                    clientDataJSON, base64URL("attestationObject", maxBytes: 16_384), transports,
                    base64URL("authenticatorData", maxBytes: 16_384, .optional), base64URL("publicKey", maxBytes: 2048, .optional),
                    Member("publicKeyAlgorithm", .integer, .optional),
                ])),
        ]))
    /// `AuthenticationResponseJSON`: what `navigator.credentials.get()` gives.
    static let authenticationResponse = Member(
        "credential",
        .object([
            credentialID, rawID, publicKeyType, attachment, extensionResults,
            Member(
                "response",
                .object([
                    clientDataJSON, base64URL("authenticatorData", maxBytes: 1024), base64URL("signature", maxBytes: 1024),
                    Member("userHandle", .nullable(.string(maxBytes: 128, pattern: "^[A-Za-z0-9_-]*$")), .optional),
                ])),
        ]))

    static let descriptor = Schema.object([Member("type", .string), Member("id", .string), Member("transports", .array(.string), .optional)])
    static let requestOptions = [
        Member("challenge", .string), Member("timeout", .integer(minimum: 0)), Member("rpId", .string),
        Member("allowCredentials", .array(descriptor)), Member("userVerification", .string(values: ["required", "preferred"])),
    ]
    static let passkeyID = Member("passkey_id", .string(maxBytes: 128))
    static let passkeyEntry = Schema.object([
        passkeyID, Member("name", .string), Member("created_at", .timestamp), Member("last_used_at", .nullable(.timestamp)),
        Member("backup_eligible", .boolean), Member("backed_up", .boolean), Member("aaguid", .string),
        Member("authenticator", .nullable(.string)), Member("attestation", .string(values: ["none", "self", "basic", "anonca"])),
        Member("flagged", .boolean),
        Member("app_attest", .nullable(.object([Member("app_id", .string), Member("environment", .string(values: ["development", "production"]))]))),
    ])
    static let name = Member("name", .string(maxBytes: 64), .optional)

    public static let registerOptions = MethodContract(
        "identity.passkey_register_options", .recentStepUp, retry: .safe,
        summary: "Options for navigator.credentials.create(): a fresh single-use challenge, the user's opaque handle.",
        params: [Fields.session],
        result: [
            Member("challenge", .string), Member("rp", .object([Member("id", .string), Member("name", .string)])),
            Member("user", .object([Member("id", .string), Member("name", .string), Member("displayName", .string)])),
            Member("pubKeyCredParams", .array(.object([Member("type", .string), Member("alg", .integer)]))),
            Member("timeout", .integer(minimum: 0)), Member("excludeCredentials", .array(descriptor)),
            Member(
                "authenticatorSelection",
                .object([
                    Member("residentKey", .string), Member("requireResidentKey", .boolean), Member("userVerification", .string),
                ])),
            Member("attestation", .string(values: ["none", "direct"])),
            Member("extensions", .object([Member("credProps", .boolean)])),
        ],
        errors: [.unauthenticated, .stepUpRequired])
    public static let register = MethodContract(
        "identity.passkey_register", .recentStepUp, retry: .neverSent, summary: "Stores the passkey a registration ceremony made.",
        params: [Fields.session, registrationResponse, name, IdentityContract.appAttest], result: [passkeyID],
        errors: [.unauthenticated, .stepUpRequired, .invalidToken, .invalidCredentials, .conflict])
    public static let loginOptions = MethodContract(
        "identity.passkey_login_options", .open, group: .auth, retry: .safe,
        summary: "Options for navigator.credentials.get() at sign-in; without a username, any discoverable passkey.",
        params: [Fields.username.optional], result: requestOptions, errors: [.rateLimited])
    public static let login = MethodContract(
        "identity.passkey_login", .open, group: .auth, retry: .neverSent,
        summary: "Sign-in with a passkey: aal 2 when the authenticator verified the user.",
        params: [authenticationResponse, Fields.deviceID, Member("device_token", .string(maxBytes: 128), .optional)],
        result: IdentityContract.loginResult, errors: [.invalidToken, .invalidCredentials])
    public static let verifyOptions = MethodContract(
        "identity.passkey_verify_options", .owesFactorsAllowed, group: .auth, retry: .safe,
        summary: "Options for a step-up with one of the session user's passkeys (user verification required).",
        params: [Fields.session], result: requestOptions, errors: [.unauthenticated])
    public static let verify = MethodContract(
        "identity.passkey_verify", .owesFactorsAllowed, group: .auth, retry: .neverSent,
        summary: "Pays a factor the session owes (or refreshes its step-up) with a passkey.",
        params: [Fields.session, authenticationResponse], result: [Fields.aal],
        errors: [.unauthenticated, .invalidToken, .invalidCredentials], cacheEffect: .dropCallerSession)
    public static let passkeys = MethodContract(
        "identity.passkeys", .session, retry: .safe, summary: "The user's passkeys (never their keys).", params: [Fields.session],
        result: [Member("passkeys", .array(passkeyEntry))], errors: [.unauthenticated, .stepUpRequired])
    public static let revoke = MethodContract(
        "identity.revoke_passkey", .recentStepUp, retry: .safe, summary: "Removes a passkey.", params: [Fields.session, passkeyID],
        result: [Fields.ok], errors: [.unauthenticated, .notFound, .stepUpRequired], cacheEffect: .dropCallerSession)

    static let all = [registerOptions, register, loginOptions, login, verifyOptions, verify, passkeys, revoke]
}
