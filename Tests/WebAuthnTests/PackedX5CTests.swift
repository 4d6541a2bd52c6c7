import Secrets
import TestSupport
import WebAuthn
import XCTest

/// Packed attestation by an attestation certificate (basic), its checks and its refusals.
final class PackedX5CTests: XCTestCase {
    private let now = Int64(1_900_000_000)

    private func request(_ ca: PackedAttestationCA, leaf: [UInt8], alg: Int64 = -7) -> RegistrationRequest {
        var request = RegistrationRequest()
        request.format = "packed"
        request.statement = .x5c(alg: alg, chain: [leaf, ca.root], signer: ca.sign)
        return request
    }

    private func verify(_ request: RegistrationRequest, by authenticator: VectorAuthenticator) throws -> VerifiedRegistration {
        let (clientDataJSON, attestationObject) = try authenticator.register(request)
        return try verifyRegistration(
            clientDataJSON: clientDataJSON, attestationObject: attestationObject, relyingParty: .example, requireUserVerification: true, now: now)
    }

    private func refusal(_ request: RegistrationRequest, by authenticator: VectorAuthenticator) throws -> WebAuthnError? {
        do {
            _ = try verify(request, by: authenticator)
            XCTFail("accepted")
            return nil
        } catch let error as WebAuthnError {
            return error
        }
    }

    func testBasicAttestationGivesTheChainUnjudged() throws {
        let ca = try PackedAttestationCA()
        let authenticator = VectorAuthenticator()
        let leaf = try ca.leaf(aaguid: authenticator.aaguid)
        let registration = try verify(request(ca, leaf: leaf), by: authenticator)
        XCTAssertEqual(registration.format, .packed)
        XCTAssertEqual(registration.attestationType, .basic)
        XCTAssertEqual(registration.attestationTrustPath.map(\.der), [leaf, ca.root])
        XCTAssertEqual(registration.aaguid, authenticator.aaguid)
    }

    func testLeafWithoutTheAAGUIDExtensionIsAccepted() throws {
        let ca = try PackedAttestationCA()
        XCTAssertEqual(try verify(request(ca, leaf: try ca.leaf(aaguid: nil)), by: VectorAuthenticator()).attestationType, .basic)
    }

    func testRS256AttestationKeyAndRS256Credential() throws {
        let ca = try PackedAttestationCA(rsa: true)
        let authenticator = VectorAuthenticator(key: try .rsa(in: try OpenSSLScratch()))
        let registration = try verify(request(ca, leaf: try ca.leaf(aaguid: authenticator.aaguid), alg: -257), by: authenticator)
        XCTAssertEqual(registration.attestationType, .basic)
        XCTAssertEqual(registration.publicKey.algorithm, COSEKey.rs256)
    }

    func testAAGUIDMismatchIsRefused() throws {
        let ca = try PackedAttestationCA()
        let authenticator = VectorAuthenticator()
        var other = authenticator.aaguid
        other[15] ^= 0xFF
        XCTAssertEqual(try refusal(request(ca, leaf: try ca.leaf(aaguid: other)), by: authenticator)?.reason, .badAttestation)
    }

    func testCriticalAAGUIDExtensionIsRefused() throws {
        let ca = try PackedAttestationCA()
        let authenticator = VectorAuthenticator()
        let leaf = try ca.leaf(aaguid: nil, extensions: ["basicConstraints=CA:FALSE", "1.3.6.1.4.1.45724.1.1.4=critical,DER:04:10:" + Hex.encode(authenticator.aaguid)])
        XCTAssertEqual(try refusal(request(ca, leaf: leaf), by: authenticator)?.reason, .badAttestation)
    }

    func testFlippedSignatureByteIsRefused() throws {
        let ca = try PackedAttestationCA()
        let authenticator = VectorAuthenticator()
        var request = request(ca, leaf: try ca.leaf(aaguid: authenticator.aaguid))
        request.tamperSignature = { $0[$0.count - 3] ^= 0x40 }
        XCTAssertEqual(try refusal(request, by: authenticator)?.reason, .badSignature)
    }

    func testSignatureByTheCredentialKeyInsteadIsRefused() throws {
        let ca = try PackedAttestationCA()
        let authenticator = VectorAuthenticator()
        var request = RegistrationRequest()
        request.format = "packed"
        request.statement = .x5c(alg: -7, chain: [try ca.leaf(aaguid: authenticator.aaguid)], signer: authenticator.key.sign)
        XCTAssertEqual(try refusal(request, by: authenticator)?.reason, .badSignature)
    }

    func testAlgMustFitTheCertificatesKey() throws {
        let ca = try PackedAttestationCA()
        let authenticator = VectorAuthenticator()
        let leaf = try ca.leaf(aaguid: authenticator.aaguid)
        XCTAssertEqual(try refusal(request(ca, leaf: leaf, alg: -257), by: authenticator)?.reason, .badAttestation)
        XCTAssertEqual(try refusal(request(ca, leaf: leaf, alg: -8), by: authenticator)?.reason, .unsupportedAlgorithm)
    }

    func testCertificateRequirementsOfSection8_2_1() throws {
        let ca = try PackedAttestationCA()
        let authenticator = VectorAuthenticator()
        let refusedLeaves: [(String, [UInt8])] = [
            ("OU", try ca.leaf(subject: "/C=US/O=Test Vendor/OU=Attestation/CN=Test Batch 1", aaguid: authenticator.aaguid)),
            ("no OU", try ca.leaf(subject: "/C=US/O=Test Vendor/CN=Test Batch 1", aaguid: authenticator.aaguid)),
            ("no C", try ca.leaf(subject: "/O=Test Vendor/OU=Authenticator Attestation/CN=Test Batch 1", aaguid: authenticator.aaguid)),
            ("no O", try ca.leaf(subject: "/C=US/OU=Authenticator Attestation/CN=Test Batch 1", aaguid: authenticator.aaguid)),
            ("no CN", try ca.leaf(subject: "/C=US/O=Test Vendor/OU=Authenticator Attestation", aaguid: authenticator.aaguid)),
            ("a CA", try ca.leaf(aaguid: authenticator.aaguid, extensions: ["basicConstraints=critical,CA:TRUE"])),
            ("v1", try ca.leaf(aaguid: nil, extensions: [])),
        ]
        for (what, leaf) in refusedLeaves {
            XCTAssertEqual(try refusal(request(ca, leaf: leaf), by: authenticator)?.reason, .badAttestation, what)
        }
    }

    func testX5CEntriesMustBeCertificates() throws {
        let ca = try PackedAttestationCA()
        let authenticator = VectorAuthenticator()
        let leaf = try ca.leaf(aaguid: authenticator.aaguid)
        for chain in [[leaf + [0]], [Array(leaf.dropLast())], [[0x30, 0x00]], [leaf, [1, 2, 3]]] {
            XCTAssertEqual(try refusal(request(ca, leaf: chain[0]).replacingChain(chain, signer: ca.sign), by: authenticator)?.reason, .badAttestation)
        }
    }
}

extension RegistrationRequest {
    fileprivate func replacingChain(_ chain: [[UInt8]], signer: @escaping ([UInt8]) throws -> [UInt8]) -> RegistrationRequest {
        var request = self
        request.statement = .x5c(alg: -7, chain: chain, signer: signer)
        return request
    }
}
