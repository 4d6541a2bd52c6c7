/// The attestation object (WebAuthn L3 §6.5.4): a CBOR map of fmt, attStmt and authData.
struct AttestationObject {
    let format: String
    /// A map whose members depend on the format.
    let statement: CBOR
    let authenticatorData: [UInt8]

    init(_ bytes: [UInt8]) throws(WebAuthnError) {
        let value: CBOR
        do {
            value = try CBORDecoder.decode(bytes)
        } catch {
            throw WebAuthnError(.malformed, "attestation object: \(error.kind.rawValue)")
        }
        guard value.mapEntries != nil else { throw WebAuthnError(.malformed, "attestation object: not a map") }
        guard let format = value["fmt"]?.text else { throw WebAuthnError(.malformed, "attestation object: fmt missing or not text") }
        guard let statement = value["attStmt"], statement.mapEntries != nil else {
            throw WebAuthnError(.malformed, "attestation object: attStmt missing or not a map")
        }
        guard let authenticatorData = value["authData"]?.bytes else {
            throw WebAuthnError(.malformed, "attestation object: authData missing or not bytes")
        }
        self.format = format
        self.statement = statement
        self.authenticatorData = authenticatorData
    }
}
