// The checks registration (§7.1) and authentication (§7.2) share.

extension RelyingParty {
    /// The type, an allowed origin, and no cross-origin use (this verifier serves no iframes).
    func check(_ clientData: ClientData, expectedType: String) throws(WebAuthnError) {
        guard sameBytes(clientData.type, expectedType) else {
            throw WebAuthnError(.wrongType, "client data: type is not \(expectedType)")
        }
        guard origins.contains(where: { sameBytes($0, clientData.origin) }) else {
            throw WebAuthnError(.originNotAllowed, "client data: origin is not one of the relying party's")
        }
        guard clientData.crossOrigin != true, clientData.topOrigin == nil else {
            throw WebAuthnError(.crossOrigin, "client data: made in a cross-origin frame")
        }
    }

    /// The RP ID's hash, user presence, and user verification when required.
    func check(_ authenticatorData: AuthenticatorData, requireUserVerification: Bool) throws(WebAuthnError) {
        guard authenticatorData.rpIDHash == idHash else {
            throw WebAuthnError(.rpIDMismatch, "authenticator data: rpIdHash is not SHA-256 of the RP ID")
        }
        guard authenticatorData.flags.contains(.userPresent) else {
            throw WebAuthnError(.userNotPresent, "authenticator data: user presence (UP) not set")
        }
        guard !requireUserVerification || authenticatorData.flags.contains(.userVerified) else {
            throw WebAuthnError(.userNotVerified, "authenticator data: user verification (UV) required but not set")
        }
    }
}

/// Exact comparison: `String` equality is canonical equivalence, which origins must not get.
private func sameBytes(_ a: String, _ b: String) -> Bool {
    a.utf8.elementsEqual(b.utf8)
}
