import Secrets
import TestSupport
import WebAuthn

/// The key of a credential the software authenticator holds.
enum CredentialKey {
    /// ES256, by Secrets' P-256 key.
    case p256(P256PrivateKey)
    /// A key made by openssl in a scratch directory: RS256, or an ES256 key a certificate must name.
    case openSSL(OpenSSLScratch, file: String, cose: CBOR)

    static func rsa(in scratch: OpenSSLScratch) throws -> CredentialKey {
        try scratch.makeKey("credential-rsa.key", .rsa(bits: 2048))
        let modulus = try scratch.rsaModulus("credential-rsa.key")
        return .openSSL(scratch, file: "credential-rsa.key", cose: map([(1, 3), (3, -257), (-1, .bytes(modulus)), (-2, .bytes([1, 0, 1]))]))
    }

    static func openSSLP256(in scratch: OpenSSLScratch) throws -> CredentialKey {
        try scratch.makeKey("credential-p256.key", .p256)
        return .openSSL(scratch, file: "credential-p256.key", cose: es256COSE(point: try scratch.p256Point("credential-p256.key")))
    }

    static func es256COSE(point: [UInt8]) -> CBOR {
        map([(1, 2), (3, -7), (-1, 1), (-2, .bytes(Array(point[1..<33]))), (-3, .bytes(Array(point[33...])))])
    }

    var cose: CBOR {
        switch self {
        case .p256(let key): return Self.es256COSE(point: key.publicKey.x963)
        case .openSSL(_, _, let cose): return cose
        }
    }

    var algorithm: Int64 { cose[3]?.integer ?? 0 }

    func sign(_ message: [UInt8]) throws -> [UInt8] {
        switch self {
        case .p256(let key): return key.signature(for: message)
        case .openSSL(let scratch, let file, _): return try scratch.sign(message, with: file)
        }
    }
}

/// An attestation statement as the software authenticator makes it, once it knows what is signed.
enum Statement {
    /// `{}`, as `none` has it.
    case empty
    /// Packed self attestation by the credential key; `alg` nil: the credential's own.
    case selfSigned(alg: Int64?)
    /// Packed with x5c: `signer` signs authenticator data ‖ the client data's hash.
    case x5c(alg: Int64, chain: [[UInt8]], signer: ([UInt8]) throws -> [UInt8])
    /// Apple anonymous: the chain made for the nonce.
    case apple(chain: ([UInt8]) throws -> [[UInt8]])
    case raw(CBOR)
}

/// What a registration sends, every part open to change before it is encoded.
struct RegistrationRequest {
    var type = "webauthn.create"
    var challenge = [UInt8](repeating: 0x5A, count: 32)
    var origin = "https://example.com"
    /// Client data members after origin, e.g. `,"crossOrigin":true`.
    var extraClientData = ""
    var rpID = "example.com"
    var flags: AuthenticatorData.Flags = [.userPresent, .userVerified, .attestedCredentialData]
    var signCount: UInt32 = 0
    /// In place of the credential's COSE key.
    var coseKey: CBOR?
    var extensions: CBOR?
    /// Bytes after the authenticator data's parts.
    var trailing: [UInt8] = []
    var format = "none"
    var statement = Statement.empty
    /// Applied to the statement's signature once made.
    var tamperSignature: (inout [UInt8]) -> Void = { _ in }
}

/// What an assertion sends.
struct AssertionRequest {
    var type = "webauthn.get"
    var challenge = [UInt8](repeating: 0xA5, count: 32)
    var origin = "https://example.com"
    var extraClientData = ""
    var rpID = "example.com"
    var flags: AuthenticatorData.Flags = [.userPresent, .userVerified]
    var signCount: UInt32 = 1
    /// Adds attested credential data (and the AT flag), which an assertion must not carry.
    var attestedCredential = false
}

/// An authenticator whose every field a test may vary (keys, formats, flags, counters), making
/// attestation objects and assertions for one credential; the module's `SoftwareAuthenticator`
/// makes only the well-formed `none` kind the benches need.
struct VectorAuthenticator {
    let key: CredentialKey
    var credentialID = SecureRandom.bytes(32)
    var aaguid: [UInt8] = Array(0..<16)

    init(key: CredentialKey = .p256(P256PrivateKey())) {
        self.key = key
    }

    var publicKey: COSEKey {
        get throws { try COSEKey(encoded: CBOREncoder.encode(key.cose)) }
    }

    func register(_ request: RegistrationRequest) throws -> (clientDataJSON: [UInt8], attestationObject: [UInt8]) {
        let clientDataJSON = Self.clientData(request.type, request.challenge, request.origin, request.extraClientData)
        let authenticatorData = self.authenticatorData(
            rpID: request.rpID, flags: request.flags, signCount: request.signCount,
            attested: attestedCredentialData(request.coseKey ?? key.cose), extensions: request.extensions) + request.trailing
        let signed = authenticatorData + SHA256.hash(clientDataJSON)
        let statement: CBOR
        switch request.statement {
        case .empty:
            statement = map([])
        case .selfSigned(let alg):
            var signature = try key.sign(signed)
            request.tamperSignature(&signature)
            statement = map([("alg", CBOR(integerLiteral: alg ?? key.algorithm)), ("sig", .bytes(signature))])
        case .x5c(let alg, let chain, let signer):
            var signature = try signer(signed)
            request.tamperSignature(&signature)
            statement = map([("alg", CBOR(integerLiteral: alg)), ("sig", .bytes(signature)), ("x5c", .array(chain.map(CBOR.bytes)))])
        case .apple(let chain):
            statement = map([("x5c", .array(try chain(SHA256.hash(signed)).map(CBOR.bytes)))])
        case .raw(let value):
            statement = value
        }
        let object = map([("fmt", .text(request.format)), ("attStmt", statement), ("authData", .bytes(authenticatorData))])
        return (clientDataJSON, CBOREncoder.encode(object))
    }

    func assert(_ request: AssertionRequest) throws -> (clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8]) {
        let clientDataJSON = Self.clientData(request.type, request.challenge, request.origin, request.extraClientData)
        var flags = request.flags
        if request.attestedCredential { flags.insert(.attestedCredentialData) }
        let authenticatorData = self.authenticatorData(
            rpID: request.rpID, flags: flags, signCount: request.signCount,
            attested: request.attestedCredential ? attestedCredentialData(key.cose) : [], extensions: nil)
        return (clientDataJSON, authenticatorData, try key.sign(authenticatorData + SHA256.hash(clientDataJSON)))
    }

    func attestedCredentialData(_ cose: CBOR) -> [UInt8] {
        aaguid + CBOREncoder.bigEndian(UInt64(credentialID.count), bytes: 2) + credentialID + CBOREncoder.encode(cose)
    }

    func authenticatorData(rpID: String, flags: AuthenticatorData.Flags, signCount: UInt32, attested: [UInt8], extensions: CBOR?) -> [UInt8] {
        SHA256.hash(rpID) + [flags.rawValue] + CBOREncoder.bigEndian(UInt64(signCount), bytes: 4) + attested
            + (extensions.map(CBOREncoder.encode) ?? [])
    }

    static func clientData(_ type: String, _ challenge: [UInt8], _ origin: String, _ extra: String) -> [UInt8] {
        utf8(#"{"type":"\#(type)","challenge":"\#(Base64URL.encode(challenge))","origin":"\#(origin)"\#(extra)}"#)
    }
}

extension RelyingParty {
    /// example.com, served from https://example.com, every format, Apple's real root.
    static let example = RelyingParty(id: "example.com", origins: ["https://example.com"])
}
