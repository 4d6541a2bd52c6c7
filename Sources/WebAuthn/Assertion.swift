import Secrets

/// An assertion that passed every check of WebAuthn L3 §7.2 but the challenge's: compare
/// `challenge` with the one issued (and consume it), then store `signCount`.
public struct VerifiedAssertion: Sendable {
    /// From client data, for the caller to compare with the challenge it issued.
    public let challenge: [UInt8]
    public let signCount: UInt32
    public let userVerified: Bool
    public let backupEligible: Bool
    public let backedUp: Bool
}

/// Verifies an assertion (navigator.credentials.get's response) by the credential the caller
/// looked up from its ID (and whose user handle it checked): `credentialPublicKey` is
/// `COSEKey(encoded:)` of the stored key, `storedSignCount` the count stored last.
///
/// A count that does not grow is refused with `counter_regressed` (a sign the authenticator
/// may be cloned; the caller flags the credential), except 0 after 0: synced passkeys always
/// send 0. It is checked after the signature, so only the credential's holder can trip it.
public func verifyAssertion(
    clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], credentialPublicKey: COSEKey, storedSignCount: UInt32,
    relyingParty: RelyingParty, requireUserVerification: Bool
) throws(WebAuthnError) -> VerifiedAssertion {
    let clientData = try parseClientData(clientDataJSON)
    try relyingParty.check(clientData, expectedType: "webauthn.get")
    let data = try AuthenticatorData(authenticatorData)
    guard data.attestedCredential == nil else {
        throw WebAuthnError(.malformed, "authenticator data: an assertion carries no attested credential data (AT set)")
    }
    try relyingParty.check(data, requireUserVerification: requireUserVerification)
    guard credentialPublicKey.isValidSignature(signature, for: authenticatorData + SHA256.hash(clientDataJSON)) else {
        throw WebAuthnError(.badSignature, "assertion: the signature does not verify with the credential key")
    }
    guard data.signCount > storedSignCount || (data.signCount == 0 && storedSignCount == 0) else {
        throw WebAuthnError(.counterRegressed, "assertion: the signature count did not grow")
    }
    let flags = data.flags
    return VerifiedAssertion(
        challenge: clientData.challenge, signCount: data.signCount, userVerified: flags.contains(.userVerified),
        backupEligible: flags.contains(.backupEligible), backedUp: flags.contains(.backedUp))
}
