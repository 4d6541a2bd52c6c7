import Secrets
import TestSupport
import WebAuthn
import XCTest

final class AssertionTests: XCTestCase {
    private func verify(
        _ request: AssertionRequest = AssertionRequest(), by authenticator: VectorAuthenticator, storedSignCount: UInt32 = 0,
        key: COSEKey? = nil, requireUserVerification: Bool = true, tamper: (inout [UInt8]) -> Void = { _ in }
    ) throws -> VerifiedAssertion {
        var (clientDataJSON, authenticatorData, signature) = try authenticator.assert(request)
        tamper(&signature)
        return try verifyAssertion(
            clientDataJSON: clientDataJSON, authenticatorData: authenticatorData, signature: signature,
            credentialPublicKey: try key ?? authenticator.publicKey, storedSignCount: storedSignCount, relyingParty: .example,
            requireUserVerification: requireUserVerification)
    }

    private func reason(_ body: () throws -> VerifiedAssertion, file: StaticString = #filePath, line: UInt = #line) -> WebAuthnError.Reason? {
        do {
            _ = try body()
            XCTFail("accepted", file: file, line: line)
            return nil
        } catch {
            return (error as? WebAuthnError)?.reason
        }
    }

    func testAcceptedWithItsFlagsAndCount() throws {
        let authenticator = VectorAuthenticator()
        var request = AssertionRequest()
        request.signCount = 42
        request.flags.insert(.backupEligible)
        let assertion = try verify(request, by: authenticator, storedSignCount: 41)
        XCTAssertEqual(assertion.challenge, request.challenge)
        XCTAssertEqual(assertion.signCount, 42)
        XCTAssertTrue(assertion.userVerified)
        XCTAssertTrue(assertion.backupEligible)
        XCTAssertFalse(assertion.backedUp)
    }

    func testKeyStoredAtRegistrationVerifiesTheAssertion() throws {
        let authenticator = VectorAuthenticator()
        let (clientDataJSON, attestationObject) = try authenticator.register(RegistrationRequest())
        let registration = try verifyRegistration(
            clientDataJSON: clientDataJSON, attestationObject: attestationObject, relyingParty: .example, requireUserVerification: true, now: 0)
        let stored = try COSEKey(encoded: registration.publicKey.encoded)
        XCTAssertEqual(try verify(by: authenticator, storedSignCount: registration.signCount, key: stored).signCount, 1)
    }

    func testRS256Assertion() throws {
        let authenticator = VectorAuthenticator(key: try .rsa(in: try OpenSSLScratch()))
        XCTAssertEqual(try verify(by: authenticator).signCount, 1)
        XCTAssertEqual(reason { try verify(by: authenticator, tamper: { $0[0] ^= 0x01 }) }, .badSignature)
    }

    func testUserVerificationRequiredOrNot() throws {
        let authenticator = VectorAuthenticator()
        var request = AssertionRequest()
        request.flags.remove(.userVerified)
        XCTAssertEqual(reason { try verify(request, by: authenticator) }, .userNotVerified)
        XCTAssertFalse(try verify(request, by: authenticator, requireUserVerification: false).userVerified)
        request.flags.remove(.userPresent)
        XCTAssertEqual(reason { try verify(request, by: authenticator, requireUserVerification: false) }, .userNotPresent)
    }

    func testSignCounts() throws {
        let authenticator = VectorAuthenticator()
        var request = AssertionRequest()
        request.signCount = 0
        XCTAssertEqual(try verify(request, by: authenticator, storedSignCount: 0).signCount, 0, "synced passkeys send 0")
        XCTAssertEqual(reason { try verify(request, by: authenticator, storedSignCount: 5) }, .counterRegressed)
        request.signCount = 6
        XCTAssertEqual(try verify(request, by: authenticator, storedSignCount: 5).signCount, 6)
        XCTAssertEqual(try verify(request, by: authenticator, storedSignCount: 0).signCount, 6)
        XCTAssertEqual(reason { try verify(request, by: authenticator, storedSignCount: 6) }, .counterRegressed)
        request.signCount = 5
        XCTAssertEqual(reason { try verify(request, by: authenticator, storedSignCount: 6) }, .counterRegressed)
        request.signCount = UInt32.max
        XCTAssertEqual(try verify(request, by: authenticator, storedSignCount: UInt32.max - 1).signCount, UInt32.max)
    }

    func testCounterIsJudgedOnlyAfterTheSignature() throws {
        var request = AssertionRequest()
        request.signCount = 3
        XCTAssertEqual(reason { try verify(request, by: VectorAuthenticator(), storedSignCount: 9, tamper: { $0[10] ^= 1 }) }, .badSignature)
    }

    func testEveryFlippedSignatureByteIsRefused() throws {
        let authenticator = VectorAuthenticator()
        let (clientDataJSON, authenticatorData, signature) = try authenticator.assert(AssertionRequest())
        let key = try authenticator.publicKey
        for index in signature.indices {
            var tampered = signature
            tampered[index] ^= 0x01
            XCTAssertThrowsError(
                try verifyAssertion(
                    clientDataJSON: clientDataJSON, authenticatorData: authenticatorData, signature: tampered, credentialPublicKey: key,
                    storedSignCount: 0, relyingParty: .example, requireUserVerification: true), "byte \(index)"
            ) { error in XCTAssertEqual((error as? WebAuthnError)?.reason, .badSignature) }
        }
    }

    func testSignedBytesCannotBeChanged() throws {
        let authenticator = VectorAuthenticator()
        let (clientDataJSON, authenticatorData, signature) = try authenticator.assert(AssertionRequest())
        var raisedCount = authenticatorData
        raisedCount[36] &+= 1
        let otherChallenge = VectorAuthenticator.clientData("webauthn.get", [UInt8](repeating: 0xA6, count: 32), "https://example.com", "")
        for (client, data) in [(clientDataJSON, raisedCount), (otherChallenge, authenticatorData)] {
            XCTAssertThrowsError(
                try verifyAssertion(
                    clientDataJSON: client, authenticatorData: data, signature: signature, credentialPublicKey: try authenticator.publicKey,
                    storedSignCount: 0, relyingParty: .example, requireUserVerification: true)
            ) { error in XCTAssertEqual((error as? WebAuthnError)?.reason, .badSignature) }
        }
    }

    func testAnotherCredentialsKeyIsRefused() throws {
        let other = try VectorAuthenticator().publicKey
        XCTAssertEqual(reason { try verify(by: VectorAuthenticator(), key: other) }, .badSignature)
    }

    func testAttestedCredentialDataIsRefused() throws {
        var request = AssertionRequest()
        request.attestedCredential = true
        XCTAssertEqual(reason { try verify(request, by: VectorAuthenticator()) }, .malformed)
    }

    func testClientDataAndRelyingPartyChecks() throws {
        let authenticator = VectorAuthenticator()
        var request = AssertionRequest()
        request.type = "webauthn.create"
        XCTAssertEqual(reason { try verify(request, by: authenticator) }, .wrongType)
        request = AssertionRequest()
        request.origin = "https://example.com.evil.example"
        XCTAssertEqual(reason { try verify(request, by: authenticator) }, .originNotAllowed)
        request = AssertionRequest()
        request.extraClientData = #","crossOrigin":true,"topOrigin":"https://framing.example""#
        XCTAssertEqual(reason { try verify(request, by: authenticator) }, .crossOrigin)
        request = AssertionRequest()
        request.rpID = "example.org"
        XCTAssertEqual(reason { try verify(request, by: authenticator) }, .rpIDMismatch)
        request = AssertionRequest()
        request.flags.insert(.backedUp)
        XCTAssertEqual(reason { try verify(request, by: authenticator) }, .malformed)
    }
}
