import Secrets

/// The `packed` format (WebAuthn L3 §8.2): self attestation, or a signature by an attestation
/// certificate (x5c) whose chain the caller judges.
extension AttestationInput {
    /// id-fido-gen-ce-aaguid: the authenticator model, as an OCTET STRING of 16 bytes.
    static let aaguidExtension = "1.3.6.1.4.1.45724.1.1.4"

    func verifyPacked() throws(WebAuthnError) -> VerifiedStatement {
        guard let algorithm = statement["alg"]?.integer else { throw badAttestation("packed: alg missing or not an integer") }
        guard let signature = statement["sig"]?.bytes else { throw badAttestation("packed: sig missing or not bytes") }
        let signed = authenticatorData + clientDataHash
        guard statement["x5c"] != nil else {
            guard statement["ecdaaKeyId"] == nil else { throw badAttestation("packed: ECDAA is not supported") }
            guard algorithm == Int64(credential.publicKey.algorithm) else {
                throw badAttestation("packed: self attestation's alg differs from the credential key's")
            }
            guard credential.publicKey.isValidSignature(signature, for: signed) else {
                throw WebAuthnError(.badSignature, "packed: the self attestation signature does not verify")
            }
            return VerifiedStatement(type: .selfAttestation, trustPath: [])
        }
        let chain = try certificates(.packed)
        let leaf = chain[0]
        let signatureAlgorithm: X509Certificate.SignatureAlgorithm
        switch Int(algorithm) {
        case COSEKey.es256: signatureAlgorithm = .ecdsaP256SHA256
        case COSEKey.rs256: signatureAlgorithm = .rsaPKCS1SHA256
        default: throw WebAuthnError(.unsupportedAlgorithm, "packed: alg \(algorithm) is neither ES256 (-7) nor RS256 (-257)")
        }
        guard leaf.hasKey(for: signatureAlgorithm) else { throw badAttestation("packed: alg \(algorithm) does not fit the certificate's key") }
        guard leaf.isValidSignature(signature, for: signed, algorithm: signatureAlgorithm) else {
            throw WebAuthnError(.badSignature, "packed: the attestation certificate's signature does not verify")
        }
        try checkPackedCertificate(leaf)
        return VerifiedStatement(type: .basic, trustPath: chain)
    }

    /// §8.2.1: the attestation certificate's requirements.
    private func checkPackedCertificate(_ leaf: X509Certificate) throws(WebAuthnError) {
        guard leaf.version == 2 else { throw badAttestation("packed: the certificate is not X.509 v3") }
        let subject = leaf.subjectFields
        guard ["C", "O", "CN"].allSatisfy({ !(subject[$0] ?? "").isEmpty }) else {
            throw badAttestation("packed: the certificate's subject lacks C, O or CN")
        }
        guard subject["OU"].map({ $0.utf8.elementsEqual("Authenticator Attestation".utf8) }) == true else {
            throw badAttestation("packed: the certificate's subject OU is not \"Authenticator Attestation\"")
        }
        guard !leaf.isCertificateAuthority else { throw badAttestation("packed: the certificate is a CA") }
        if let aaguid = leaf.extensionValue(oid: Self.aaguidExtension) {
            guard aaguid == [0x04, 0x10] + credential.aaguid else {
                throw badAttestation("packed: the certificate's AAGUID differs from the authenticator data's")
            }
            guard !leaf.isCriticalExtension(oid: Self.aaguidExtension) else {
                throw badAttestation("packed: the AAGUID extension must not be critical")
            }
        }
    }
}
