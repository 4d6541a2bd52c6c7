import Secrets

/// What an attestation statement proved about the credential (WebAuthn L3 §6.5.3).
public enum AttestationType: String, Sendable {
    /// No statement (`none`).
    case none
    /// Signed by the credential key itself (`packed` without x5c).
    case selfAttestation = "self"
    /// Signed by an attestation certificate (`packed` x5c). Its chain is not checked against
    /// any trust anchor here: the caller may record it and judge it (e.g. by FIDO metadata).
    case basic
    /// Certified by an anonymisation CA whose chain was verified (`apple`).
    case anonCA
}

/// A verified statement's type and its certificates, leaf first (none for `none` and self).
struct VerifiedStatement {
    let type: AttestationType
    let trustPath: [X509Certificate]
}

/// What every format's statement is checked against.
struct AttestationInput {
    let statement: CBOR
    /// The raw authenticator data, as signed.
    let authenticatorData: [UInt8]
    let credential: AuthenticatorData.AttestedCredential
    let clientDataHash: [UInt8]
}

extension AttestationInput {
    func verify(_ format: AttestationFormat, appleRoots: [X509Certificate], now: Int64) throws(WebAuthnError) -> VerifiedStatement {
        switch format {
        case .none:
            guard statement.mapEntries?.isEmpty == true else { throw badAttestation("none: attStmt is not empty") }
            return VerifiedStatement(type: .none, trustPath: [])
        case .packed:
            return try verifyPacked()
        case .apple:
            return try verifyApple(roots: appleRoots, now: now)
        }
    }

    /// x5c: a non-empty array of DER certificates, leaf first.
    func certificates(_ format: AttestationFormat) throws(WebAuthnError) -> [X509Certificate] {
        guard let items = statement["x5c"]?.array, !items.isEmpty else {
            throw badAttestation("\(format.rawValue): x5c missing, empty or not an array")
        }
        var certificates: [X509Certificate] = []
        for item in items {
            guard let der = item.bytes, let certificate = try? X509Certificate(der: der) else {
                throw badAttestation("\(format.rawValue): an x5c entry is not a DER certificate")
            }
            certificates.append(certificate)
        }
        return certificates
    }
}

func badAttestation(_ what: String) -> WebAuthnError {
    WebAuthnError(.badAttestation, "attestation statement: \(what)")
}
