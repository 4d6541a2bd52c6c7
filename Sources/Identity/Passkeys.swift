import LineProtocol
import Secrets
import WebAuthn

/// A `RegistrationResponseJSON` or `AuthenticationResponseJSON` as the router took it (its
/// shape already checked against the contract), with its binary members decoded.
public struct PasskeyCredential: Sendable {
    public var credentialID: [UInt8]
    public var clientDataJSON: [UInt8]
    /// Registration: the attestation object. Assertion: the authenticator data.
    public var authenticatorBytes: [UInt8]
    public var signature: [UInt8]
    public var userHandle: [UInt8]?
    public var transports: [String]

    public init(registration json: [String: JSON]) throws {
        let response = try Self.response(json)
        self.init(
            credentialID: try Self.credentialID(json), clientDataJSON: try Self.bytes(response, "clientDataJSON"),
            authenticatorBytes: try Self.bytes(response, "attestationObject"), signature: [], userHandle: nil,
            transports: response["transports"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    }

    public init(assertion json: [String: JSON]) throws {
        let response = try Self.response(json)
        var handle: [UInt8]?
        if let text = response["userHandle"]?.stringValue, !text.isEmpty { handle = try Self.bytes(response, "userHandle") }
        self.init(
            credentialID: try Self.credentialID(json), clientDataJSON: try Self.bytes(response, "clientDataJSON"),
            authenticatorBytes: try Self.bytes(response, "authenticatorData"), signature: try Self.bytes(response, "signature"),
            userHandle: handle, transports: [])
    }

    init(credentialID: [UInt8], clientDataJSON: [UInt8], authenticatorBytes: [UInt8], signature: [UInt8], userHandle: [UInt8]?, transports: [String]) {
        self.credentialID = credentialID
        self.clientDataJSON = clientDataJSON
        self.authenticatorBytes = authenticatorBytes
        self.signature = signature
        self.userHandle = userHandle
        self.transports = transports
    }

    private static func response(_ json: [String: JSON]) throws -> [String: JSON] {
        guard let response = json["response"]?.objectValue else { throw malformed("credential.response must be an object") }
        return response
    }

    /// `id` and `rawId` are the same bytes (WebAuthn): a credential whose two differ is refused.
    private static func credentialID(_ json: [String: JSON]) throws -> [UInt8] {
        let id = try bytes(json, "id")
        guard try bytes(json, "rawId") == id, !id.isEmpty else {
            throw malformed("credential.id and credential.rawId must be the same base64url credential id")
        }
        return id
    }

    private static func bytes(_ object: [String: JSON], _ name: String) throws -> [UInt8] {
        guard let text = object[name]?.stringValue, let bytes = Base64URL.decode(text) else {
            throw malformed("credential \(name) must be base64url")
        }
        return bytes
    }

    /// A credential whose members do not decode is one that does not verify: refused as the
    /// ceremony's own checks refuse (`invalid_credentials`, `malformed`), not as a bad parameter,
    /// since its shape is what the schema allows.
    private static func malformed(_ message: String) -> IdentityError {
        IdentityError.ceremonyRefused(WebAuthnError(.malformed, message))
    }
}

/// Passkeys: identity's WebAuthn ceremonies (registration, sign-in, step-up) and the user's list.
/// Each ceremony's challenge is single use and short lived, stored hashed, and used up whatever
/// the ceremony decides. A passkey that verified the user (UV) is two factors, possession and
/// biometry or PIN: sign-in at aal 2, like a `biometry` device key; without UV it is one.
extension IdentityService {
    static let passkeyChallengeBytes = 32
    static let passkeyAlgorithms: [Int64] = [-7, -257]

    public func passkeyRegisterOptions(token: String) throws -> JSON {
        let session = try recentlySteppedUpSession(token: token)
        guard let user = try store.user(id: session.userID) else { throw IdentityError.unauthenticated }
        let policy = settings.passkeys
        let challenge = try issuePasskeyChallenge(.register, userID: user.userID).bytes
        let handle = try store.passkeyUserHandle(userID: user.userID)
        let existing = try store.passkeys(userID: user.userID)
        return [
            "challenge": .string(Base64URL.encode(challenge)),
            "rp": ["id": .string(policy.relyingParty.id), "name": .string(policy.name)],
            "user": ["id": .string(Base64URL.encode(handle)), "name": .string(user.username), "displayName": .string(user.username)],
            "pubKeyCredParams": .array(Self.passkeyAlgorithms.map { ["type": "public-key", "alg": .int($0)] }),
            "timeout": .int(policy.ceremonySeconds * 1000),
            "excludeCredentials": .array(existing.map(Self.descriptor)),
            "authenticatorSelection": ["residentKey": "required", "requireResidentKey": true, "userVerification": "required"],
            "attestation": .string(policy.attestationPreference),
            "extensions": ["credProps": true],
        ]
    }

    /// Verifies the ceremony and stores the passkey; the challenge must be this user's
    /// registration challenge. User verification is required: a passkey is a sign-in factor.
    public func passkeyRegister(
        token: String, credential: PasskeyCredential, name rawName: String?, appAttest: AppAttestEnrollment? = nil, caller: Caller
    ) throws -> String {
        let session = try recentlySteppedUpSession(token: token)
        let now = clock.now()
        let verified: VerifiedRegistration
        do {
            verified = try verifyRegistration(
                clientDataJSON: credential.clientDataJSON, attestationObject: credential.authenticatorBytes,
                relyingParty: settings.passkeys.relyingParty, requireUserVerification: true, now: now)
        } catch {
            // The refusal is the answer; the challenge goes whatever state it was in.
            _ = try? consumePasskeyChallenge(of: credential, purpose: .register, userID: session.userID, now: now)
            try store.record([event(session.userID, "passkey.refused", error.reason.rawValue, device: session.deviceID, caller, now)])
            throw IdentityError.ceremonyRefused(error)
        }
        try consumePasskeyChallenge(verified.challenge, purpose: .register, userID: session.userID, now: now)
        guard verified.credentialID == credential.credentialID else {
            throw IdentityError.ceremonyRefused(WebAuthnError(.malformed, "the attested credential id is not the credential's id"))
        }
        let attestedBy = try appAttest.map { try attest($0, userID: session.userID, bound: verified.credentialID, now: now) }
        let aaguid = KnownAuthenticators.text(verified.aaguid)
        let name = try Self.passkeyName(rawName) ?? KnownAuthenticators.names[aaguid] ?? "Passkey"
        let passkey = PasskeyRecord(
            passkeyID: Self.newID("pk_"), userID: session.userID, credentialID: verified.credentialID, publicKey: verified.publicKey.encoded,
            signCount: verified.signCount, aaguid: verified.aaguid, attestation: verified.attestationType.rawValue,
            backupEligible: verified.backupEligible, backedUp: verified.backedUp,
            transports: credential.transports.filter { $0.utf8.count <= 32 }.prefix(8).map { $0 }, name: name, createdAt: now,
            attestedAppID: attestedBy?.appID, attestedEnvironment: attestedBy?.environment)
        let saved = try store.savePasskey(
            passkey, limit: settings.passkeys.maxPerUser,
            events: [event(session.userID, "passkey.added", verified.format.rawValue, device: session.deviceID, caller, now)])
        guard saved else { throw IdentityError.conflict(field: "credential", "this passkey is already registered") }
        notify(.passkeyAdded(name: name), userID: session.userID, device: session.deviceID, at: now)
        return passkey.passkeyID
    }

    /// Sign-in options. Every passkey here is discoverable (registration requires a resident
    /// key), so the options never list credentials: a username only binds the challenge to
    /// its user, and a username nobody has gets the same answer, bound to no one.
    public func passkeyLoginOptions(username: String?, caller: Caller) throws -> JSON {
        var userID: String?
        if let username {
            let address = caller.client ?? "unknown"
            if let wait = try challengeBudget.reserve(address: address, now: Double(clock.now())) {
                throw IdentityError.rateLimited(retryAfterSeconds: max(1, wait))
            }
            userID = try (try? Normalization.username(username)).flatMap { try store.user(username: $0) }?.userID ?? Self.decoyUserID
        }
        return try requestOptions(try issuePasskeyChallenge(.login, userID: userID).bytes, allow: [], userVerification: "preferred")
    }

    /// Step-up options: the session user's passkeys, user verification required.
    public func passkeyVerifyOptions(token: String) throws -> JSON {
        let session = try introspect(token: token)
        let challenge = try issuePasskeyChallenge(.verify, userID: session.userID).bytes
        return try requestOptions(challenge, allow: try store.passkeys(userID: session.userID), userVerification: "required")
    }

    /// An unknown credential, a revoked or flagged one, a foreign user handle and a wrong
    /// signature all answer `invalid_credentials` after the same work: one read, one signature
    /// check (on a decoy key when there is no passkey) and one write that uses up the challenge.
    public func passkeyLogin(credential: PasskeyCredential, deviceID rawDevice: String, deviceToken: String?, caller: Caller) throws -> LoginResult {
        let deviceID = try Normalization.deviceID(rawDevice)
        let (passkey, verified) = try checkAssertion(credential, purpose: .login, sessionUserID: nil, requireUserVerification: false, device: deviceID, caller: caller)
        guard let user = try store.user(id: passkey.userID) else { throw IdentityError.invalidCredentials("the passkey does not verify") }
        var tokenHash: [UInt8]?
        if let deviceToken, OpaqueToken.isWellFormed(deviceToken, prefix: Self.deviceTokenPrefix) {
            tokenHash = OpaqueToken.hash(deviceToken)
        }
        return try openSession(
            user: user, deviceID: deviceID, aal: verified.userVerified ? 2 : 1, clearThrottle: nil, rehash: nil, deviceTokenHash: tokenHash,
            how: "passkey_login.succeeded", caller: caller, now: clock.now())
    }

    /// A passkey of the session's user, with user verification: pays an owed factor and
    /// refreshes the step-up window.
    public func passkeyVerify(token: String, credential: PasskeyCredential, caller: Caller) throws -> Int {
        let session = try introspect(token: token)
        _ = try checkAssertion(credential, purpose: .verify, sessionUserID: session.userID, requireUserVerification: true, device: session.deviceID, caller: caller)
        return try elevate(sessionID: session.sessionID, factor: "passkey", caller: caller)
    }

    public func passkeys(token: String) throws -> [PasskeyRecord] {
        try store.passkeys(userID: settledSession(token: token).userID)
    }

    public func revokePasskey(token: String, passkeyID: String, caller: Caller) throws {
        let session = try recentlySteppedUpSession(token: token)
        let now = clock.now()
        let removed = try store.revokePasskey(
            passkeyID: passkeyID, userID: session.userID, event: event(session.userID, "passkey.removed", "ok", device: session.deviceID, caller, now))
        guard removed else { throw IdentityError.notFound("no such passkey of yours") }
        notify(.passkeyRemoved, userID: session.userID, device: session.deviceID, at: now)
    }

    // MARK: Checks

    /// Order: the challenge (read from clientDataJSON; `invalid_token` when unknown, foreign,
    /// used or expired), then the assertion and the counter (`invalid_credentials`).
    private func checkAssertion(
        _ credential: PasskeyCredential, purpose: PasskeyPurpose, sessionUserID: String?, requireUserVerification: Bool, device: String,
        caller: Caller
    ) throws -> (PasskeyRecord, VerifiedAssertion) {
        let stored = try store.passkey(credentialID: credential.credentialID)
        let usable = stored.flatMap { $0.flaggedAt == nil ? $0 : nil }
        let key = usable.flatMap { try? COSEKey(encoded: $0.publicKey) } ?? Self.decoyPasskey
        let outcome = Result { () throws(WebAuthnError) -> VerifiedAssertion in
            try verifyAssertion(
                clientDataJSON: credential.clientDataJSON, authenticatorData: credential.authenticatorBytes, signature: credential.signature,
                credentialPublicKey: key, storedSignCount: usable?.signCount ?? 0, relyingParty: settings.passkeys.relyingParty,
                requireUserVerification: requireUserVerification)
        }
        let now = clock.now()
        let challenge = try consumePasskeyChallenge(of: credential, purpose: purpose, userID: sessionUserID, now: now)
        // What the client data and authenticator data say is refused first, with its reason:
        // it reads the same for a known credential and an unknown one.
        if case .failure(let error) = outcome, error.reason != .badSignature, error.reason != .counterRegressed {
            throw IdentityError.ceremonyRefused(error)
        }
        let handleMatches = try credential.userHandle.map { handle in
            try usable.map { constantTimeEquals(try store.passkeyUserHandle(userID: $0.userID), handle) } ?? false
        } ?? true
        let failed = { (owner: String?) throws -> IdentityError in
            if let owner { try self.store.record([self.event(owner, "factor.failed", "passkey", device: device, caller, now)]) }
            return IdentityError.invalidCredentials("the passkey does not verify")
        }
        guard let passkey = usable, handleMatches, challenge.userID.map({ $0 == passkey.userID }) ?? true else { throw try failed(stored?.userID) }
        let verified: VerifiedAssertion
        switch outcome {
        case .success(let assertion): verified = assertion
        case .failure(let error) where error.reason == .counterRegressed:
            try store.flagPasskey(
                passkeyID: passkey.passkeyID, now: now, event: event(passkey.userID, "passkey.flagged", "counter_regressed", device: device, caller, now))
            throw IdentityError.ceremonyRefused(error)
        case .failure: throw try failed(passkey.userID)
        }
        switch try store.usePasskey(
            passkeyID: passkey.passkeyID, signCount: verified.signCount, backedUp: verified.backedUp, now: now,
            events: [event(passkey.userID, "factor.passed", verified.userVerified ? "passkey" : "passkey_presence", device: device, caller, now)])
        {
        case .recorded: return (passkey, verified)
        case .counterRegressed: throw IdentityError.ceremonyRefused(WebAuthnError(.counterRegressed, "the signature counter did not grow"))
        case .gone: throw IdentityError.invalidCredentials("the passkey does not verify")
        }
    }

    func issuePasskeyChallenge(_ purpose: PasskeyPurpose, userID: String?) throws -> (bytes: [UInt8], expiresAt: Int64) {
        let now = clock.now()
        let bytes = SecureRandom.bytes(Self.passkeyChallengeBytes)
        let expiresAt = now + settings.passkeys.ceremonySeconds
        try store.insertPasskeyChallenge(hash: SHA256.hash(bytes), purpose: purpose, userID: userID, expiresAt: expiresAt, now: now)
        return (bytes, expiresAt)
    }

    /// Reads the challenge out of clientDataJSON first, so a malformed credential still burns it.
    @discardableResult
    private func consumePasskeyChallenge(of credential: PasskeyCredential, purpose: PasskeyPurpose, userID: String?, now: Int64) throws -> PasskeyChallengeRecord {
        guard let clientData = try? parseClientData(credential.clientDataJSON) else {
            throw IdentityError.ceremonyRefused(WebAuthnError(.malformed, "clientDataJSON is not the JSON WebAuthn describes"))
        }
        return try consumePasskeyChallenge(clientData.challenge, purpose: purpose, userID: userID, now: now)
    }

    @discardableResult
    func consumePasskeyChallenge(_ challenge: [UInt8], purpose: PasskeyPurpose, userID: String?, now: Int64) throws -> PasskeyChallengeRecord {
        guard challenge.count == Self.passkeyChallengeBytes, let issued = try store.consumePasskeyChallenge(hash: SHA256.hash(challenge), now: now) else {
            throw IdentityError.invalidChallenge(detail: "unknown")
        }
        guard issued.purpose == purpose, userID == nil || issued.userID == userID else { throw IdentityError.invalidChallenge(detail: "foreign") }
        guard issued.consumedNow else { throw IdentityError.invalidChallenge(detail: "used") }
        guard issued.expiresAt > now else { throw IdentityError.invalidChallenge(detail: "expired") }
        return issued
    }

    private func requestOptions(_ challenge: [UInt8], allow: [PasskeyRecord], userVerification: String) throws -> JSON {
        [
            "challenge": .string(Base64URL.encode(challenge)), "timeout": .int(settings.passkeys.ceremonySeconds * 1000),
            "rpId": .string(settings.passkeys.relyingParty.id), "allowCredentials": .array(allow.map(Self.descriptor)),
            "userVerification": .string(userVerification),
        ]
    }

    private static func descriptor(_ passkey: PasskeyRecord) -> JSON {
        var entry: [String: JSON] = ["type": "public-key", "id": .string(Base64URL.encode(passkey.credentialID))]
        if !passkey.transports.isEmpty { entry["transports"] = .array(passkey.transports.map(JSON.string)) }
        return .object(entry)
    }

    /// A name the user gave: 1-64 bytes, no control characters (it goes into mails and pages).
    private static func passkeyName(_ raw: String?) throws -> String? {
        guard let raw else { return nil }
        let name = raw.trimmingWhitespace()
        guard !name.isEmpty, name.utf8.count <= 64, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw IdentityError.invalidField("name", "name must be 1-64 bytes of text without control characters")
        }
        return name
    }

    /// What an unknown credential is checked against, so it costs what a known one does.
    static let decoyPasskey: COSEKey = {
        do { return try COSEKey(p256: P256PrivateKey().publicKey) } catch { fatalError("the decoy passkey key is a valid P-256 key") }
    }()
}
