import Foundation

/// What a sign-in left to do.
public struct SignInResult: Sendable, Equatable {
    /// Factors the session owes before it may do anything but pay one of them (any one is
    /// enough): `sms` (then `startCode`/`checkCode`), `device_key` (then `verifyDeviceKey`),
    /// `totp` (then `verifyAuthenticatorCode`), `passkey` (then `verifyPasskey`). A recovery code
    /// (`verifyRecoveryCode`) pays any of them.
    public let requiredFactors: [Factor]
    /// 1: password (or a passcode-protected key) only; 2: a second factor too.
    public let aal: Int
    public let sessionID: String?
    /// The anti-phishing image the user chose, to show before they go on.
    public let sitekey: Data?

    public var needsSecondFactor: Bool { !requiredFactors.isEmpty }
}

extension LatchkeyClient {
    /// Password sign-in. The session is kept for later calls, even when factors are owed.
    /// Sends (and replaces) this device's token from the store.
    public func signIn(username: String, password: String, deviceID: String) async throws -> SignInResult {
        let deviceToken = try store.loadDeviceToken(username: username, deviceID: deviceID)
        let answer = try await send(Identity.Login(username: username, password: password, deviceID: deviceID, deviceToken: deviceToken))
        try store.saveSession(StoredSession(token: answer.session, sessionID: answer.sessionID, username: username, deviceID: deviceID))
        if let next = answer.deviceToken { try store.saveDeviceToken(next, username: username, deviceID: deviceID) }
        return SignInResult(
            requiredFactors: answer.requiredFactors, aal: answer.aal, sessionID: answer.sessionID,
            sitekey: answer.sitekey.flatMap { Data(base64Encoded: $0) })
    }

    /// Biometric sign-in without the password: the device signs a challenge with its enrolled
    /// key (`identity.key_login`). A `biometry` key gives aal 2 at once.
    public func signIn(username: String, deviceID: String, signer: any DeviceKeySigner) async throws -> SignInResult {
        let challenge = try await send(Identity.Challenge(deviceID: deviceID, username: username))
        let signature = try await signer.signature(for: try Self.challengeBytes(challenge.challenge))
        let answer = try await send(Identity.KeyLogin(username: username, deviceID: deviceID, challenge: challenge.challenge, signature: signature))
        try store.saveSession(StoredSession(token: answer.session, sessionID: nil, username: username, deviceID: deviceID))
        // The method table's key_login result has no required_factors: the session's own entry does.
        let own = try await send(Identity.Sessions()).sessions.first { $0.current }
        return SignInResult(requiredFactors: own?.requiredFactors ?? [], aal: answer.aal, sessionID: own?.sessionID, sitekey: nil)
    }

    /// Ends the session on the server and forgets it here (also when the server had already ended it).
    public func signOut() async throws {
        defer { try? store.saveSession(nil) }
        do {
            _ = try await send(Identity.Logout())
        } catch LatchkeyError.unauthenticated, LatchkeyError.notSignedIn {
            return
        }
    }

    /// Creates a user (SMS verification off; the phone is a claim until a code sent to it comes back).
    /// `locale`: the language of the account's mails, say `MailLanguage(locale: .current)` (English when nil).
    public func register(username: String, password: String, email: String, phone: String, locale: MailLanguage? = nil) async throws -> String {
        try await send(Identity.Register(username: username, password: password, email: email, phone: phone, locale: locale)).userID
    }

    // MARK: Device keys

    /// Lifts the signed-in session with this device's key (the `device_key` factor).
    /// Returns the session's aal (2 for a `biometry` key).
    @discardableResult
    public func verifyDeviceKey(deviceID: String, signer: any DeviceKeySigner) async throws -> Int {
        let challenge = try await send(Identity.Challenge(deviceID: deviceID))
        let signature = try await signer.signature(for: try Self.challengeBytes(challenge.challenge))
        return try await send(Identity.VerifyKey(deviceID: deviceID, challenge: challenge.challenge, signature: signature)).aal
    }

    /// Enrolls (or replaces) this device's key. Needs a second factor passed in the last minutes.
    public func enrollDeviceKey(deviceID: String, signer: any DeviceKeySigner) async throws -> String {
        let publicKey = try await signer.publicKeyX963()
        return try await send(Identity.EnrollKey(deviceID: deviceID, publicKey: publicKey, protection: signer.protection)).keyID
    }

    public func deviceKeys() async throws -> [DeviceKeySummary] { try await send(Identity.Keys()).keys }

    public func revokeDeviceKey(keyID: String) async throws { _ = try await send(Identity.RevokeKey(keyID: keyID)) }

    // MARK: Sessions and preferences

    public func sessions() async throws -> [SessionSummary] { try await send(Identity.Sessions()).sessions }

    /// Ends one of the user's sessions (another device's, or this one).
    public func revokeSession(sessionID: String) async throws { _ = try await send(Identity.Revoke(sessionID: sessionID)) }

    /// Reads the preferences, changing what is given (turning SMS verification off or changing
    /// the sitekey needs a recent second factor).
    public func preferences(
        smsVerification: Bool? = nil, sitekey: SitekeyChange = .keep, locale: MailLanguage? = nil
    ) async throws -> Identity.Preferences.Response {
        try await send(Identity.Preferences(smsVerification: smsVerification, sitekey: sitekey, locale: locale))
    }

    public func activity(limit: Int? = nil, before: Cursor? = nil) async throws -> Identity.Activity.Response {
        try await send(Identity.Activity(limit: limit, before: before))
    }

    /// The 32 bytes the device signs: a challenge travels as base64url without padding.
    static func challengeBytes(_ challenge: String) throws(LatchkeyError) -> Data {
        guard let bytes = Base64URL.decode(challenge), bytes.count == 32 else { throw LatchkeyError.invalidResponse(status: 200) }
        return bytes
    }
}
