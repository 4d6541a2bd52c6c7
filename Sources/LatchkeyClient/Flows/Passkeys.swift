import Foundation

/// Passkeys through `ASAuthorizationPlatformPublicKeyCredentialProvider`: the server's options
/// go into the platform's requests, the platform's results come back as `PasskeyRegistration`
/// and `PasskeyAssertion` (see the README's passkey screen).
extension LatchkeyClient {
    /// Options for a new passkey. Needs a second factor passed in the last minutes.
    public func passkeyRegistrationOptions() async throws -> Identity.PasskeyRegisterOptions.Response {
        try await send(Identity.PasskeyRegisterOptions())
    }

    /// Stores the passkey the platform made; returns its id.
    public func registerPasskey(_ registration: PasskeyRegistration, name: String? = nil) async throws -> String {
        try await send(Identity.PasskeyRegister(credential: registration, name: name)).passkeyID
    }

    /// Options for a passkey sign-in; with no username, the system sheet offers every passkey of the app's domain.
    public func passkeySignInOptions(username: String? = nil) async throws -> PasskeyRequestOptions {
        try await send(Identity.PasskeyLoginOptions(username: username))
    }

    /// Signs in with the assertion the system sheet gave and keeps the session (aal 2 when the
    /// platform verified the user). `username` is what the app shows and keys the device token by.
    public func signIn(passkey assertion: PasskeyAssertion, deviceID: String, username: String = "") async throws -> SignInResult {
        let deviceToken = try store.loadDeviceToken(username: username, deviceID: deviceID)
        let answer = try await send(Identity.PasskeyLogin(credential: assertion, deviceID: deviceID, deviceToken: deviceToken))
        try store.saveSession(StoredSession(token: answer.session, sessionID: answer.sessionID, username: username, deviceID: deviceID))
        return SignInResult(
            requiredFactors: answer.requiredFactors, aal: answer.aal, sessionID: answer.sessionID,
            sitekey: answer.sitekey.flatMap { Data(base64Encoded: $0) })
    }

    /// Options for a step-up with a passkey (the `passkey` factor).
    public func passkeyVerificationOptions() async throws -> PasskeyRequestOptions { try await send(Identity.PasskeyVerifyOptions()) }

    /// Pays the owed factor (or refreshes the step-up) with the assertion; returns the session's aal.
    @discardableResult
    public func verifyPasskey(_ assertion: PasskeyAssertion) async throws -> Int { try await send(Identity.PasskeyVerify(credential: assertion)).aal }

    public func passkeys() async throws -> [PasskeySummary] { try await send(Identity.Passkeys()).passkeys }

    public func revokePasskey(passkeyID: String) async throws { _ = try await send(Identity.RevokePasskey(passkeyID: passkeyID)) }
}
