import Secrets

/// A registration that passed every check of WebAuthn L3 §7.1 but the challenge's: compare
/// `challenge` with the one issued (and consume it), check that `credentialID` is not
/// registered yet, then store `credentialID`, `publicKey.encoded` and `signCount`.
public struct VerifiedRegistration: Sendable {
    /// From client data, for the caller to compare with the challenge it issued.
    public let challenge: [UInt8]
    public let origin: String
    public let credentialID: [UInt8]
    public let publicKey: COSEKey
    public let signCount: UInt32
    /// The authenticator model (16 bytes; zeros when the authenticator does not say).
    public let aaguid: [UInt8]
    public let format: AttestationFormat
    public let attestationType: AttestationType
    /// The statement's x5c, leaf first; empty for `none` and self attestation.
    public let attestationTrustPath: [X509Certificate]
    public let userVerified: Bool
    public let backupEligible: Bool
    public let backedUp: Bool
}

/// Verifies a new credential (navigator.credentials.create's response). `now` (Unix seconds)
/// is the time an `apple` attestation's certificates must be valid at.
public func verifyRegistration(
    clientDataJSON: [UInt8], attestationObject: [UInt8], relyingParty: RelyingParty, requireUserVerification: Bool, now: Int64
) throws(WebAuthnError) -> VerifiedRegistration {
    let clientData = try parseClientData(clientDataJSON)
    try relyingParty.check(clientData, expectedType: "webauthn.create")
    let object = try AttestationObject(attestationObject)
    let authenticatorData = try AuthenticatorData(object.authenticatorData)
    try relyingParty.check(authenticatorData, requireUserVerification: requireUserVerification)
    // Its key's alg was checked as it was read: ES256 or RS256 only.
    guard let credential = authenticatorData.attestedCredential else {
        throw WebAuthnError(.malformed, "authenticator data: no attested credential data (AT not set)")
    }
    guard let format = AttestationFormat(rawValue: object.format) else {
        throw WebAuthnError(.unsupportedFormat, "attestation object: fmt is not none, packed or apple")
    }
    guard relyingParty.allowedFormats.contains(format) else {
        throw WebAuthnError(.formatNotAllowed, "attestation object: fmt \(format.rawValue) is not allowed")
    }
    let input = AttestationInput(
        statement: object.statement, authenticatorData: object.authenticatorData, credential: credential,
        clientDataHash: SHA256.hash(clientDataJSON))
    let statement = try input.verify(format, appleRoots: relyingParty.appleRoots, now: now)
    let flags = authenticatorData.flags
    return VerifiedRegistration(
        challenge: clientData.challenge, origin: clientData.origin, credentialID: credential.credentialID, publicKey: credential.publicKey,
        signCount: authenticatorData.signCount, aaguid: credential.aaguid, format: format, attestationType: statement.type,
        attestationTrustPath: statement.trustPath, userVerified: flags.contains(.userVerified),
        backupEligible: flags.contains(.backupEligible), backedUp: flags.contains(.backedUp))
}
