import Secrets

/// Biometric device keys: P-256 keys made in the iPhone's Secure Enclave, enrolled at aal 2,
/// then proving possession (and, for `biometry` keys, the user's biometrics) by signing
/// single-use challenges.
extension IdentityService {
    public static let challengeByteCount = 32
    /// The owner of challenges issued for unknown usernames: no user id is empty.
    static let decoyUserID = ""

    /// A challenge for `deviceID`, bound to the session's user, or to `username`'s. An unknown
    /// username gets a challenge stored the same way, bound to no user (`decoyUserID`): the same
    /// reads and the same write as a known one (no enumeration by timing); it later fails like
    /// a challenge issued for someone else.
    /// Challenges by username (no session) are limited per client address (`rate_limited`).
    public func challenge(deviceID rawDevice: String, token: String?, username: String?, caller: Caller = Caller(client: nil)) throws -> IssuedChallenge {
        let deviceID = try Normalization.deviceID(rawDevice)
        let userID: String?
        if let token {
            userID = try introspect(token: token).userID
        } else if let username {
            let address = caller.client ?? "unknown"
            let now = Double(clock.now())
            if let wait = try challengeBudget.reserve(address: address, now: now) { throw IdentityError.rateLimited(retryAfterSeconds: max(1, wait)) }
            userID = try (try? Normalization.username(username)).flatMap { try store.user(username: $0) }?.userID
        } else {
            throw IdentityError.invalidField("session", "give session or username")
        }
        let now = clock.now()
        let bytes = SecureRandom.bytes(Self.challengeByteCount)
        let expiresAt = now + settings.challengeLifetimeSeconds
        try store.insertChallenge(hash: SHA256.hash(bytes), userID: userID ?? Self.decoyUserID, deviceID: deviceID, expiresAt: expiresAt, now: now)
        return IssuedChallenge(challenge: Base64URL.encode(bytes), expiresAt: expiresAt)
    }

    /// Enrolls the session's device key; needs a recent step-up. A new key replaces the device's
    /// old one. `appAttest`: the App Attest key that vouches for it (`AppAttestKeys`).
    public func enrollKey(
        token: String, deviceID rawDevice: String, publicKey: String, protection rawProtection: String, appAttest: AppAttestEnrollment? = nil,
        caller: Caller
    ) throws -> String {
        let session = try recentlySteppedUpSession(token: token)
        let deviceID = try sessionDevice(rawDevice, session)
        guard let protection = KeyProtection(rawValue: rawProtection) else {
            throw IdentityError.invalidField("protection", "protection must be biometry or user_presence")
        }
        guard let x963 = Base64URL.decode(publicKey), (try? P256PublicKey(x963: x963)) != nil else {
            throw IdentityError.invalidField("public_key", "public_key must be a P-256 point on the curve: 65 bytes X9.63 uncompressed, base64")
        }
        let now = clock.now()
        let attestation = try appAttest.map { try attest($0, userID: session.userID, bound: x963, now: now) }
        let key = DeviceKeyRecord(
            keyID: Self.newID("key_"), userID: session.userID, deviceID: deviceID, publicKey: x963, protection: protection,
            createdAt: now, lastUsedAt: nil, revokedAt: nil, attestation: attestation)
        let caller = caller
        try store.enrollKey(key, limit: settings.maxKeysPerUser, events: [event(session.userID, "key.enrolled", protection.rawValue, device: deviceID, caller, now)])
        notify(.deviceKeyAdded(protection: protection.rawValue), userID: session.userID, device: deviceID, at: now)
        return key.keyID
    }

    /// A signed challenge on the session's own device: a `biometry` key lifts the session to
    /// aal 2; a `user_presence` key proves possession only (the aal stays).
    public func verifyKey(
        token: String, deviceID rawDevice: String, challenge: String, signature: String, appAttestAssertion: String? = nil, caller: Caller
    ) throws -> Int {
        let session = try introspect(token: token)
        let deviceID = try sessionDevice(rawDevice, session)
        let key = try checkSignedChallenge(userID: session.userID, deviceID: deviceID, challenge: challenge, signature: signature, caller: caller)
        let attested = try attestedUse(of: key, assertion: appAttestAssertion, clientData: Base64URL.decode(challenge) ?? [])
        guard key.protection == .biometry else { return session.aal }
        try requireAttestedUse(attested)
        return try elevate(sessionID: session.sessionID, factor: "device_key", caller: caller)
    }

    /// Biometric login without the password: a `biometry` key gives an aal 2 session; a
    /// `user_presence` key an aal 1 session (it proves possession, like a password proves knowledge).
    /// The password throttle does not apply: a signature cannot be guessed.
    /// An unknown user, a device without an active key and a wrong signature get the same
    /// `invalid_credentials` after the same work: one read of the key, one signature check (on a
    /// decoy key when there is none) and one write that uses up the challenge.
    public func keyLogin(
        username rawUsername: String, deviceID rawDevice: String, challenge: String, signature: String, appAttestAssertion: String? = nil,
        caller: Caller
    ) throws -> LoginResult {
        let deviceID = try Normalization.deviceID(rawDevice)
        let user = try (try? Normalization.username(rawUsername)).flatMap { try store.user(username: $0) }
        let userID = user?.userID ?? Self.decoyUserID
        let stored = try store.latestKey(userID: userID, deviceID: deviceID)
        let (challengeBytes, der) = try decodeSignedChallenge(challenge, signature)
        let key = stored?.revokedAt == nil ? stored : nil
        let publicKey = try key.map { key throws in try parsedKeys.key(x963: key.publicKey) } ?? Self.decoyKey
        let valid = publicKey.isValidSignature(der: der, for: challengeBytes) && key != nil
        let now = clock.now()
        let issued = try store.consumeChallenge(hash: SHA256.hash(challengeBytes), userID: userID, deviceID: deviceID, now: now) { issued in
            guard Self.isUsable(issued, userID: userID, deviceID: deviceID, now: now), let key else { return nil }
            let outcome = valid ? "factor.passed" : "factor.failed"
            return (valid ? key.keyID : nil, [event(userID, outcome, "device_key", device: deviceID, caller, now)])
        }
        try Self.checkChallenge(issued, userID: userID, deviceID: deviceID, now: now)
        guard valid, let user, let key else { throw IdentityError.invalidCredentials("the signature does not verify with this device's key") }
        // Without the genuine app's assertion where one is required, the key proves possession only.
        let attested = try attestedUse(of: key, assertion: appAttestAssertion, clientData: challengeBytes)
        let biometric = key.protection == .biometry && (attested || !settings.appAttest.required)
        return try openSession(
            user: user, deviceID: deviceID, aal: biometric ? 2 : 1, clearThrottle: nil, rehash: nil,
            how: "key_login.succeeded", caller: caller, now: clock.now())
    }

    public func keys(token: String) throws -> [DeviceKeyRecord] {
        try store.activeKeys(userID: settledSession(token: token).userID)
    }

    /// Revokes one of the user's keys: a sensitive change (recent step-up).
    public func revokeKey(token: String, keyID: String, caller: Caller) throws {
        let session = try revokeOwn(token: token, caller: caller, audited: ("key.revoked", "ok"), missing: "no such active key of yours") {
            userID, now, event in try store.revokeKey(keyID: keyID, userID: userID, now: now, event: event)
        }
        notify(.deviceKeyRemoved, userID: session.userID, device: session.deviceID, at: clock.now())
    }

    // MARK: Checks, in a fixed order

    /// Order: the key (`not_found`: `no_key` / `key_revoked`), the encodings (`invalid_params`),
    /// the challenge (`invalid_token`: `unknown` / `foreign` / `used` / `expired`; consumed
    /// here, so a failed signature burns it), the signature (`invalid_credentials`).
    func checkSignedChallenge(userID: String, deviceID: String, challenge: String, signature: String, caller: Caller) throws -> DeviceKeyRecord {
        guard let key = try store.latestKey(userID: userID, deviceID: deviceID) else {
            throw IdentityError.notFound("this device has no key", detail: "no_key")
        }
        guard key.revokedAt == nil else { throw IdentityError.notFound("this device's key was revoked", detail: "key_revoked") }
        let (challengeBytes, der) = try decodeSignedChallenge(challenge, signature)
        let now = clock.now()
        try Self.checkChallenge(
            try store.consumeChallenge(hash: SHA256.hash(challengeBytes), userID: userID, deviceID: deviceID, now: now), userID: userID,
            deviceID: deviceID, now: now)
        let valid = (try? parsedKeys.key(x963: key.publicKey))?.isValidSignature(der: der, for: challengeBytes) ?? false
        guard valid else {
            try store.record([event(userID, "factor.failed", "device_key", device: deviceID, caller, now)])
            throw IdentityError.invalidCredentials("the signature does not verify with this device's key")
        }
        try store.markKeyUsed(keyID: key.keyID, now: now, events: [event(userID, "factor.passed", "device_key", device: deviceID, caller, now)])
        return key
    }

    private func decodeSignedChallenge(_ challenge: String, _ signature: String) throws -> (challenge: [UInt8], der: [UInt8]) {
        guard let challengeBytes = Base64URL.decode(challenge), challengeBytes.count == Self.challengeByteCount else {
            throw IdentityError.invalidField("challenge", "challenge must be the base64url string identity.challenge gave")
        }
        guard let der = Base64URL.decode(signature), (8...80).contains(der.count) else {
            throw IdentityError.invalidField("signature", "signature must be a DER ECDSA signature, base64")
        }
        return (challengeBytes, der)
    }

    private static func isUsable(_ issued: ChallengeRecord, userID: String, deviceID: String, now: Int64) -> Bool {
        issued.userID == userID && issued.deviceID == deviceID && issued.usedAt == nil && issued.expiresAt > now
    }

    private static func checkChallenge(_ issued: ChallengeRecord?, userID: String, deviceID: String, now: Int64) throws {
        guard let issued else { throw IdentityError.invalidChallenge(detail: "unknown") }
        guard issued.userID == userID, issued.deviceID == deviceID else { throw IdentityError.invalidChallenge(detail: "foreign") }
        guard issued.usedAt == nil else { throw IdentityError.invalidChallenge(detail: "used") }
        guard issued.expiresAt > now else { throw IdentityError.invalidChallenge(detail: "expired") }
    }

    private func sessionDevice(_ raw: String, _ session: SessionRecord) throws -> String {
        let deviceID = try Normalization.deviceID(raw)
        guard deviceID == session.deviceID else {
            throw IdentityError.invalidField("device_id", "device_id must be the device of this session")
        }
        return deviceID
    }
}
