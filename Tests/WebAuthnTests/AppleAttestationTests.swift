import Secrets
import TestSupport
import WebAuthn
import XCTest

/// Apple anonymous attestation under a test root given as `appleRoots`, and under Apple's real one.
final class AppleAttestationTests: XCTestCase {
    private func setting(_ ca: AppleStyleCA, chain: (([UInt8]) throws -> [[UInt8]])? = nil) -> (VectorAuthenticator, RegistrationRequest) {
        var request = RegistrationRequest()
        request.format = "apple"
        request.flags.insert(.backupEligible)
        request.statement = .apple(chain: chain ?? { nonce in try ca.chain(nonce: nonce) })
        return (VectorAuthenticator(key: ca.credentialKey), request)
    }

    private func verify(_ authenticator: VectorAuthenticator, _ request: RegistrationRequest, roots: [X509Certificate], at now: Int64) throws -> VerifiedRegistration {
        let (clientDataJSON, attestationObject) = try authenticator.register(request)
        let relyingParty = RelyingParty(id: "example.com", origins: ["https://example.com"], appleRoots: roots)
        return try verifyRegistration(
            clientDataJSON: clientDataJSON, attestationObject: attestationObject, relyingParty: relyingParty, requireUserVerification: true, now: now)
    }

    /// Refused as bad_attestation, for the check whose message holds `check`.
    private func assertRefused(_ check: String, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> VerifiedRegistration) {
        do {
            _ = try body()
            XCTFail("accepted", file: file, line: line)
        } catch {
            XCTAssertEqual((error as? WebAuthnError)?.reason, .badAttestation, file: file, line: line)
            XCTAssertTrue("\(error)".contains(check), "\(error)", file: file, line: line)
        }
    }

    /// A minute on: the leaf is made during the registration, after its time is taken.
    private var now: Int64 { Int64(Date().timeIntervalSince1970) + 60 }

    func testAcceptedUnderTheTestRoot() throws {
        let ca = try AppleStyleCA()
        let (authenticator, request) = setting(ca)
        let registration = try verify(authenticator, request, roots: [ca.root], at: now)
        XCTAssertEqual(registration.format, .apple)
        XCTAssertEqual(registration.attestationType, .anonCA)
        XCTAssertEqual(registration.attestationTrustPath.count, 2)
        XCTAssertTrue(registration.backupEligible)
    }

    func testRefusedUnderApplesRealRoot() throws {
        let ca = try AppleStyleCA()
        let (authenticator, request) = setting(ca)
        assertRefused("Apple root") { try verify(authenticator, request, roots: [AppleWebAuthnRoot.certificate], at: now) }
        XCTAssertEqual(RelyingParty.example.appleRoots.map(\.der), [AppleWebAuthnRoot.certificate.der], "Apple's root by default")
    }

    func testRefusedOutsideTheCertificatesValidity() throws {
        let ca = try AppleStyleCA()
        let (authenticator, request) = setting(ca)
        assertRefused("Apple root") { try verify(authenticator, request, roots: [ca.root], at: now - 86_400) }
        assertRefused("Apple root") { try verify(authenticator, request, roots: [ca.root], at: now + 5 * 86_400) }
    }

    func testWrongNonceIsRefused() throws {
        let ca = try AppleStyleCA()
        let (authenticator, request) = setting(ca) { nonce in try ca.chain(nonce: SHA256.hash(nonce)) }
        assertRefused("nonce") { try verify(authenticator, request, roots: [ca.root], at: now) }
    }

    func testCertificateForAnotherKeyIsRefused() throws {
        let ca = try AppleStyleCA()
        try ca.scratch.makeKey("other.key", .p256)
        let (authenticator, request) = setting(ca) { nonce in try ca.chain(nonce: nonce, key: "other.key") }
        assertRefused("credential key") { try verify(authenticator, request, roots: [ca.root], at: now) }
    }

    func testChainWithoutTheIntermediateIsRefused() throws {
        let ca = try AppleStyleCA()
        let (authenticator, request) = setting(ca) { nonce in Array(try ca.chain(nonce: nonce).prefix(1)) }
        assertRefused("Apple root") { try verify(authenticator, request, roots: [ca.root], at: now) }
    }

    func testMissingX5CIsRefused() throws {
        let ca = try AppleStyleCA()
        let authenticator: VectorAuthenticator
        var request: RegistrationRequest
        (authenticator, request) = setting(ca)
        request.statement = .raw(map([]))
        assertRefused("x5c missing") { try verify(authenticator, request, roots: [ca.root], at: now) }
        request.statement = .raw(map([("x5c", .bytes([1]))]))
        assertRefused("x5c missing") { try verify(authenticator, request, roots: [ca.root], at: now) }
    }

    func testApplesRootIsTheOneShipped() {
        let root = AppleWebAuthnRoot.certificate
        XCTAssertEqual(Hex.encode(SHA256.hash(root.der)), "0915dd5c07a28db549d1f677bb5a75d4bfbe9561a773424327762e9e02f9bb29")
        XCTAssertTrue(root.isCertificateAuthority)
        XCTAssertEqual(root.subjectFields["CN"], "Apple WebAuthn Root CA")
        XCTAssertNil(root.publicKeyX963, "P-384")
        XCTAssertTrue(X509Certificate.chainIsValid(leafFirst: [root], anchors: [root], at: 1_900_000_000))
        XCTAssertFalse(X509Certificate.chainIsValid(leafFirst: [root], anchors: [root], at: 2_400_000_000), "expires in 2045")
    }
}
