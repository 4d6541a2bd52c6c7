import Secrets

/// The `apple` anonymous format (WebAuthn L3 §8.8): a certificate for the credential key itself,
/// naming the registration by a nonce, issued under Apple's WebAuthn root.
extension AttestationInput {
    /// Apple's nonce extension: SEQUENCE { [1] EXPLICIT OCTET STRING (32 bytes) }.
    static let appleNonceExtension = "1.2.840.113635.100.8.2"

    func verifyApple(roots: [X509Certificate], now: Int64) throws(WebAuthnError) -> VerifiedStatement {
        let chain = try certificates(.apple)
        let leaf = chain[0]
        let nonce = SHA256.hash(authenticatorData + clientDataHash)
        // DER has one encoding per value, so comparing with the expected bytes checks the structure too.
        guard leaf.extensionValue(oid: Self.appleNonceExtension) == [0x30, 0x24, 0xA1, 0x22, 0x04, 0x20] + nonce else {
            throw badAttestation("apple: the certificate's nonce is not this registration's")
        }
        guard case .es256(let key) = credential.publicKey.publicKey, leaf.publicKeyX963 == key.x963 else {
            throw badAttestation("apple: the certificate's key is not the credential key")
        }
        guard X509Certificate.chainIsValid(leafFirst: chain, anchors: roots, at: now) else {
            throw badAttestation("apple: x5c does not verify up to an Apple root at this time")
        }
        return VerifiedStatement(type: .anonCA, trustPath: chain)
    }
}
