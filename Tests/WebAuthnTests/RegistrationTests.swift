import Secrets
import TestSupport
import WebAuthn
import XCTest

/// `none` and packed self attestation, and every refusal the ceremony's own checks make.
final class RegistrationTests: XCTestCase {
    private let now = Int64(1_900_000_000)

    private func register(
        _ request: RegistrationRequest, by authenticator: VectorAuthenticator = VectorAuthenticator(),
        relyingParty: RelyingParty = .example, requireUserVerification: Bool = true
    ) throws -> VerifiedRegistration {
        let (clientDataJSON, attestationObject) = try authenticator.register(request)
        return try verifyRegistration(
            clientDataJSON: clientDataJSON, attestationObject: attestationObject, relyingParty: relyingParty,
            requireUserVerification: requireUserVerification, now: now)
    }

    /// The reason `request` is refused for, failing the test when it is accepted.
    private func refusal(
        _ request: RegistrationRequest, by authenticator: VectorAuthenticator = VectorAuthenticator(),
        relyingParty: RelyingParty = .example, requireUserVerification: Bool = true, file: StaticString = #filePath, line: UInt = #line
    ) throws -> WebAuthnError.Reason? {
        let (clientDataJSON, attestationObject) = try authenticator.register(request)
        do {
            _ = try verifyRegistration(
                clientDataJSON: clientDataJSON, attestationObject: attestationObject, relyingParty: relyingParty,
                requireUserVerification: requireUserVerification, now: now)
            XCTFail("accepted", file: file, line: line)
            return nil
        } catch {
            return error.reason
        }
    }

    private var packedSelf: RegistrationRequest {
        var request = RegistrationRequest()
        request.format = "packed"
        request.statement = .selfSigned(alg: nil)
        return request
    }

    // MARK: Accepted

    func testNoneAttestationGivesTheCredential() throws {
        let authenticator = VectorAuthenticator()
        var request = RegistrationRequest()
        request.signCount = 7
        request.flags.insert([.backupEligible, .backedUp])
        let registration = try register(request, by: authenticator)
        XCTAssertEqual(registration.challenge, request.challenge)
        XCTAssertEqual(registration.origin, "https://example.com")
        XCTAssertEqual(registration.credentialID, authenticator.credentialID)
        XCTAssertEqual(registration.aaguid, authenticator.aaguid)
        XCTAssertEqual(registration.signCount, 7)
        XCTAssertEqual(registration.format, .none)
        XCTAssertEqual(registration.attestationType, .none)
        XCTAssertTrue(registration.attestationTrustPath.isEmpty)
        XCTAssertTrue(registration.userVerified)
        XCTAssertTrue(registration.backupEligible)
        XCTAssertTrue(registration.backedUp)
        XCTAssertEqual(registration.publicKey.algorithm, COSEKey.es256)
        XCTAssertEqual(registration.publicKey.encoded, CBOREncoder.encode(authenticator.key.cose))
        guard case .es256(let key) = try COSEKey(encoded: registration.publicKey.encoded).publicKey, case .p256(let privateKey) = authenticator.key else {
            return XCTFail("not the ES256 key")
        }
        XCTAssertEqual(key, privateKey.publicKey)
    }

    func testPackedSelfAttestationES256() throws {
        let registration = try register(packedSelf)
        XCTAssertEqual(registration.format, .packed)
        XCTAssertEqual(registration.attestationType, .selfAttestation)
        XCTAssertEqual(registration.attestationType.rawValue, "self")
    }

    func testPackedSelfAttestationRS256() throws {
        let scratch = try OpenSSLScratch()
        let authenticator = VectorAuthenticator(key: try .rsa(in: scratch))
        let registration = try register(packedSelf, by: authenticator)
        XCTAssertEqual(registration.attestationType, .selfAttestation)
        XCTAssertEqual(registration.publicKey.algorithm, COSEKey.rs256)
        guard case .rs256(let key) = registration.publicKey.publicKey else { return XCTFail("not an RSA key") }
        XCTAssertEqual(key.modulus.count, 256)
        XCTAssertEqual(key.exponent, [1, 0, 1])
    }

    func testUserVerificationIsReportedAndOnlyRequiredWhenAsked() throws {
        var request = RegistrationRequest()
        request.flags.remove(.userVerified)
        XCTAssertEqual(try refusal(request), .userNotVerified)
        let registration = try register(request, requireUserVerification: false)
        XCTAssertFalse(registration.userVerified)
    }

    func testExtensionOutputsAreAccepted() throws {
        var request = RegistrationRequest()
        request.flags.insert(.extensionData)
        request.extensions = map([("credProtect", 2)])
        XCTAssertEqual(try register(request).format, .none)
    }

    // MARK: Client data

    func testWrongTypeIsRefused() throws {
        var request = RegistrationRequest()
        request.type = "webauthn.get"
        XCTAssertEqual(try refusal(request), .wrongType)
    }

    func testOriginMustBeOneOfTheRelyingPartysExactly() throws {
        for origin in ["https://evil.example", "http://example.com", "https://example.com:443", "https://example.com/", "https://EXAMPLE.com"] {
            var request = RegistrationRequest()
            request.origin = origin
            XCTAssertEqual(try refusal(request), .originNotAllowed, origin)
        }
        var request = RegistrationRequest()
        request.origin = "http://localhost:8080"
        let local = RelyingParty(id: "example.com", origins: ["https://example.com", "http://localhost:8080"])
        XCTAssertEqual(try register(request, relyingParty: local).origin, "http://localhost:8080")
    }

    func testCrossOriginIsRefused() throws {
        var request = RegistrationRequest()
        request.extraClientData = #","crossOrigin":true"#
        XCTAssertEqual(try refusal(request), .crossOrigin)
        request.extraClientData = #","crossOrigin":false,"topOrigin":"https://framing.example""#
        XCTAssertEqual(try refusal(request), .crossOrigin)
        request.extraClientData = #","crossOrigin":false,"other_keys_can_be_added_here":"do not compare clientDataJSON against a template""#
        XCTAssertNoThrow(try register(request))
    }

    // MARK: Authenticator data

    func testRPIDHashMustBeTheRelyingPartys() throws {
        var request = RegistrationRequest()
        request.rpID = "evil.example"
        XCTAssertEqual(try refusal(request), .rpIDMismatch)
        request.rpID = "example.com"
        XCTAssertEqual(try refusal(request, relyingParty: RelyingParty(id: "login.example.com", origins: ["https://example.com"])), .rpIDMismatch)
    }

    func testUserPresenceIsRequired() throws {
        var request = RegistrationRequest()
        request.flags.remove(.userPresent)
        XCTAssertEqual(try refusal(request, requireUserVerification: false), .userNotPresent)
    }

    func testAttestedCredentialDataIsRequired() throws {
        var request = RegistrationRequest()
        request.flags.remove(.attestedCredentialData)
        XCTAssertEqual(try refusal(request), .malformed, "the credential data is then trailing bytes")
        let authenticator = VectorAuthenticator()
        let authenticatorData = authenticator.authenticatorData(rpID: "example.com", flags: [.userPresent, .userVerified], signCount: 0, attested: [], extensions: nil)
        let object = CBOREncoder.encode(map([("fmt", "none"), ("attStmt", map([])), ("authData", .bytes(authenticatorData))]))
        XCTAssertThrowsError(
            try verifyRegistration(
                clientDataJSON: VectorAuthenticator.clientData("webauthn.create", [1], "https://example.com", ""), attestationObject: object,
                relyingParty: .example, requireUserVerification: true, now: now)
        ) { error in XCTAssertEqual((error as? WebAuthnError)?.reason, .malformed) }
    }

    func testTrailingBytesAfterTheAuthenticatorDataAreRefused() throws {
        var request = RegistrationRequest()
        request.trailing = [0x00]
        XCTAssertEqual(try refusal(request), .malformed)
    }

    func testBackedUpWithoutBackupEligibleIsRefused() throws {
        var request = RegistrationRequest()
        request.flags.insert(.backedUp)
        XCTAssertEqual(try refusal(request), .malformed)
    }

    func testCredentialKeyAlgorithmMustBeES256OrRS256() throws {
        var request = RegistrationRequest()
        request.coseKey = map([(1, 1), (3, -8), (-1, 6), (-2, .bytes([UInt8](repeating: 1, count: 32)))])  // Ed25519
        XCTAssertEqual(try refusal(request), .unsupportedAlgorithm)
        request.coseKey = map([(1, 2), (3, -35), (-1, 2), (-2, .bytes([UInt8](repeating: 1, count: 48))), (-3, .bytes([UInt8](repeating: 1, count: 48)))])  // ES384
        XCTAssertEqual(try refusal(request), .unsupportedAlgorithm)
    }

    // MARK: Formats

    func testFormatOutsideTheAllowedOnesIsRefused() throws {
        let packedOnly = RelyingParty(id: "example.com", origins: ["https://example.com"], allowedFormats: [.packed])
        XCTAssertEqual(try refusal(RegistrationRequest(), relyingParty: packedOnly), .formatNotAllowed)
        XCTAssertNoThrow(try register(packedSelf, relyingParty: packedOnly))
    }

    func testUnknownFormatsAreRefused() throws {
        for format in ["tpm", "android-key", "fido-u2f", "Packed", "none "] {
            var request = RegistrationRequest()
            request.format = format
            XCTAssertEqual(try refusal(request), .unsupportedFormat, format)
        }
    }

    func testNoneNeedsAnEmptyStatement() throws {
        var request = RegistrationRequest()
        request.statement = .raw(map([("alg", -7)]))
        XCTAssertEqual(try refusal(request), .badAttestation)
    }

    func testPackedSelfSignatureWithAFlippedByteIsRefused() throws {
        var request = packedSelf
        request.tamperSignature = { $0[$0.count / 2] ^= 0x01 }
        XCTAssertEqual(try refusal(request), .badSignature)
    }

    func testPackedSelfAlgMustBeTheCredentialKeys() throws {
        var request = packedSelf
        request.statement = .selfSigned(alg: -257)
        XCTAssertEqual(try refusal(request), .badAttestation)
    }

    func testPackedStatementMembersAreRequired() throws {
        var request = packedSelf
        for statement in [map([("sig", .bytes([1]))]), map([("alg", -7)]), map([("alg", "ES256"), ("sig", .bytes([1]))]), map([("alg", -7), ("sig", .bytes([1])), ("x5c", .array([]))])] {
            request.statement = .raw(statement)
            XCTAssertEqual(try refusal(request), .badAttestation)
        }
    }

    // MARK: The attestation object

    func testMalformedAttestationObjectsAreRefused() throws {
        let (clientDataJSON, object) = try VectorAuthenticator().register(RegistrationRequest())
        let value = try CBORDecoder.decode(object)
        let withoutAuthData = map([("fmt", "none"), ("attStmt", map([]))])
        let attStmtNotAMap = map([("fmt", "none"), ("attStmt", .array([])), ("authData", value["authData"]!)])
        for bytes in [object + [0], Array(object.dropLast()), [0xA0], CBOREncoder.encode(withoutAuthData), CBOREncoder.encode(attStmtNotAMap), [0x80]] {
            XCTAssertThrowsError(
                try verifyRegistration(clientDataJSON: clientDataJSON, attestationObject: bytes, relyingParty: .example, requireUserVerification: true, now: now)
            ) { error in XCTAssertEqual((error as? WebAuthnError)?.reason, .malformed) }
        }
    }

    func testEveryTruncationOfTheAttestationObjectIsRefused() throws {
        let (clientDataJSON, object) = try VectorAuthenticator().register(packedSelf)
        for length in 0..<object.count {
            XCTAssertThrowsError(
                try verifyRegistration(
                    clientDataJSON: clientDataJSON, attestationObject: Array(object.prefix(length)), relyingParty: .example, requireUserVerification: true,
                    now: now), "\(length) bytes")
        }
    }
}
