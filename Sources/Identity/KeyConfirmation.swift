import Secrets

/// Device-key signatures over bytes another service chose (accounts: a transfer's `sign`
/// bytes), checked here because identity holds the keys (internal `identity.verify_signature`).
/// The caller owns the challenge inside the bytes, its single use and its attempts.
extension IdentityService {
    static let signedMessageMaxBytes = 1024

    /// Checks that `signature` (DER ECDSA P-256 over SHA-256, base64) over `message` (base64url)
    /// was made by the active `biometry` key of this user's device; returns the key id. Order:
    /// the key (`not_found`: `no_key` / `key_revoked` / `not_biometry`), the encodings
    /// (`invalid_params`), the signature (`invalid_credentials`). Records `factor.passed` or
    /// `factor.failed` (`device_key`), as a login signature does.
    public func verifySignature(
        userID: String, deviceID rawDevice: String, message: String, signature: String, appAttestAssertion: String? = nil, caller: Caller
    ) throws -> String {
        let deviceID = try Normalization.deviceID(rawDevice)
        guard let key = try store.latestKey(userID: userID, deviceID: deviceID) else {
            throw IdentityError.notFound("this device has no key", detail: "no_key")
        }
        guard key.revokedAt == nil else { throw IdentityError.notFound("this device's key was revoked", detail: "key_revoked") }
        guard key.protection == .biometry else {
            throw IdentityError.notFound("this device's key does not ask for biometrics", detail: "not_biometry")
        }
        guard let bytes = Base64URL.decode(message), (1...Self.signedMessageMaxBytes).contains(bytes.count) else {
            throw IdentityError.invalidField("message", "message must be 1-\(Self.signedMessageMaxBytes) bytes, base64url")
        }
        guard let der = Base64URL.decode(signature), (8...80).contains(der.count) else {
            throw IdentityError.invalidField("signature", "signature must be a DER ECDSA signature, base64")
        }
        let now = clock.now()
        let valid = (try? parsedKeys.key(x963: key.publicKey))?.isValidSignature(der: der, for: bytes) ?? false
        guard valid else {
            try store.record([event(userID, "factor.failed", "device_key", device: deviceID, caller, now)])
            throw IdentityError.invalidCredentials("the signature does not verify with this device's key")
        }
        try requireAttestedUse(try attestedUse(of: key, assertion: appAttestAssertion, clientData: bytes))
        try store.markKeyUsed(keyID: key.keyID, now: now, events: [event(userID, "factor.passed", "device_key", device: deviceID, caller, now)])
        return key.keyID
    }
}
