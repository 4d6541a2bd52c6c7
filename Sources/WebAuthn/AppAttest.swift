import Secrets

/// Apple's App Attest (DeviceCheck): a key made in the Secure Enclave by a genuine, signed copy
/// of an app, checked as Apple's "Validating apps that connect to your server" says. The
/// attestation proves the key once; each assertion then signs one request with it.
public enum AppAttest {
    /// Which App Attest service made the key: its AAGUID in the attested credential data.
    public enum Environment: String, Sendable, CaseIterable {
        case development, production

        var aaguid: [UInt8] {
            switch self {
            case .development: Array("appattestdevelop".utf8)
            case .production: Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
            }
        }
    }

    /// What the server accepts: the App IDs (`TEAMID.bundle.id`), the environment, the roots.
    public struct Policy: Sendable {
        public let appIDs: [String]
        public let environment: Environment
        /// Apple's App Attestation Root CA (the operator's copy of Apple's published certificate).
        public let roots: [X509Certificate]

        public init(appIDs: [String], environment: Environment, roots: [X509Certificate]) {
            self.appIDs = appIDs
            self.environment = environment
            self.roots = roots
        }
    }

    /// An attested key: what the server keeps to check the key's assertions.
    public struct AttestedKey: Sendable, Equatable {
        /// SHA-256 of the public key: DCAppAttestService's key identifier.
        public let keyID: [UInt8]
        /// The 65-byte X9.63 point.
        public let publicKey: [UInt8]
        public let appID: String
        public let environment: Environment
        /// Apple's receipt, for the fraud-metric service (kept, not read here).
        public let receipt: [UInt8]

        public init(keyID: [UInt8], publicKey: [UInt8], appID: String, environment: Environment, receipt: [UInt8]) {
            self.keyID = keyID
            self.publicKey = publicKey
            self.appID = appID
            self.environment = environment
            self.receipt = receipt
        }
    }

    /// Apple's nonce extension in the leaf: SEQUENCE { [1] EXPLICIT OCTET STRING (32 bytes) }.
    static let nonceExtension = "1.2.840.113635.100.8.2"

    /// Checks `attestationObject` (from `attestKey(_:clientDataHash:)`) for `keyID` and
    /// `clientDataHash`, at `now`. Every step of Apple's list, in its order.
    public static func verifyAttestation(
        _ attestationObject: [UInt8], keyID: [UInt8], clientDataHash: [UInt8], policy: Policy, now: Int64
    ) throws(WebAuthnError) -> AttestedKey {
        let item = try decode(attestationObject, "attestation object")
        guard item["fmt"]?.text == "apple-appattest" else { throw refused(.unsupportedFormat, "the format is not apple-appattest") }
        guard let statement = item["attStmt"], let authenticatorBytes = item["authData"]?.bytes else {
            throw refused(.malformed, "attStmt or authData missing")
        }
        guard let chainItems = statement["x5c"]?.array, chainItems.count >= 2, chainItems.count <= 4,
            let receipt = statement["receipt"]?.bytes
        else { throw refused(.malformed, "attStmt needs x5c (the leaf and its intermediate) and receipt") }
        var chain: [X509Certificate] = []
        for element in chainItems {
            guard let der = element.bytes, let certificate = try? X509Certificate(der: der) else {
                throw refused(.badAttestation, "an x5c entry is not a DER certificate")
            }
            chain.append(certificate)
        }
        guard X509Certificate.chainIsValid(leafFirst: chain, anchors: policy.roots, at: now) else {
            throw refused(.badAttestation, "x5c does not verify up to the App Attest root at this time")
        }
        let nonce = SHA256.hash(authenticatorBytes + clientDataHash)
        // DER has one encoding per value: comparing with the expected bytes checks the structure too.
        guard chain[0].extensionValue(oid: nonceExtension) == [0x30, 0x24, 0xA1, 0x22, 0x04, 0x20] + nonce else {
            throw refused(.badAttestation, "the certificate's nonce is not SHA-256(authData || clientDataHash)")
        }
        guard let publicKey = chain[0].publicKeyX963, constantTimeEquals(SHA256.hash(publicKey), keyID) else {
            throw refused(.badAttestation, "the key id is not SHA-256 of the certificate's key")
        }
        let authenticatorData = try AuthenticatorData(authenticatorBytes)
        guard let appID = policy.appIDs.first(where: { SHA256.hash($0) == authenticatorData.rpIDHash }) else {
            throw refused(.rpIDMismatch, "the key was made for an App ID this server does not accept")
        }
        guard authenticatorData.signCount == 0 else { throw refused(.badAttestation, "an attestation's counter is 0") }
        guard let credential = authenticatorData.attestedCredential, credential.aaguid == policy.environment.aaguid else {
            throw refused(.badAttestation, "the key is not from the \(policy.environment.rawValue) App Attest environment")
        }
        guard credential.credentialID == keyID else { throw refused(.badAttestation, "the credential id is not the key id") }
        return AttestedKey(keyID: keyID, publicKey: publicKey, appID: appID, environment: policy.environment, receipt: receipt)
    }

    /// Checks an assertion (from `generateAssertion(_:clientDataHash:)` over SHA-256 of
    /// `clientData`) with the attested key; answers its counter, which the caller must store
    /// only if it is above `storedCounter` (`counter_regressed` here when it is not).
    public static func verifyAssertion(_ assertion: [UInt8], clientData: [UInt8], key: AttestedKey, storedCounter: UInt32) throws(WebAuthnError) -> UInt32 {
        let item = try decode(assertion, "assertion")
        guard let signature = item["signature"]?.bytes, let authenticatorBytes = item["authenticatorData"]?.bytes else {
            throw refused(.malformed, "an assertion has signature and authenticatorData")
        }
        // RP ID hash, flags, counter: App Attest sets the AT flag with no credential data after
        // it, so this is read as Apple lays it out, not as a WebAuthn assertion's.
        guard authenticatorBytes.count == 37 else { throw refused(.malformed, "an assertion's authenticator data is 37 bytes") }
        let rpIDHash = Array(authenticatorBytes[0..<32])
        let counter = authenticatorBytes[33..<37].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let nonce = SHA256.hash(authenticatorBytes + SHA256.hash(clientData))
        guard let publicKey = try? P256PublicKey(x963: key.publicKey), publicKey.isValidSignature(der: signature, for: nonce) else {
            throw refused(.badSignature, "the assertion's signature does not verify with the attested key")
        }
        guard rpIDHash == SHA256.hash(key.appID) else { throw refused(.rpIDMismatch, "the assertion is for another App ID") }
        guard counter > storedCounter else { throw refused(.counterRegressed, "the assertion's counter did not grow") }
        return counter
    }

    private static func decode(_ bytes: [UInt8], _ what: String) throws(WebAuthnError) -> CBOR {
        let item: CBOR
        do {
            item = try CBORDecoder.decode(bytes)
        } catch {
            throw refused(.malformed, "the \(what) is not CBOR: \(error.kind.rawValue)")
        }
        guard item.mapEntries != nil else { throw refused(.malformed, "the \(what) is not a CBOR map") }
        return item
    }

    private static func refused(_ reason: WebAuthnError.Reason, _ message: String) -> WebAuthnError {
        WebAuthnError(reason, "App Attest: " + message)
    }
}
