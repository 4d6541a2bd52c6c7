import Secrets
import WebAuthn
import XCTest

final class AuthenticatorDataTests: XCTestCase {
    private let authenticator = VectorAuthenticator()

    private func bytes(_ flags: AuthenticatorData.Flags, signCount: UInt32 = 0x0102_0304, attested: Bool = false, extensions: CBOR? = nil) -> [UInt8] {
        authenticator.authenticatorData(
            rpID: "example.com", flags: flags, signCount: signCount, attested: attested ? authenticator.attestedCredentialData(authenticator.key.cose) : [],
            extensions: extensions)
    }

    private func assertMalformed(_ bytes: [UInt8], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try AuthenticatorData(bytes), what, file: file, line: line) { error in
            XCTAssertEqual((error as? WebAuthnError)?.reason, .malformed, what, file: file, line: line)
        }
    }

    func testFieldsAndFlags() throws {
        let data = try AuthenticatorData(bytes([.userPresent, .userVerified, .backupEligible, .backedUp]))
        XCTAssertEqual(data.rpIDHash, SHA256.hash("example.com"))
        XCTAssertEqual(data.flags, [.userPresent, .userVerified, .backupEligible, .backedUp])
        XCTAssertEqual(data.flags.rawValue, 0x1D)
        XCTAssertEqual(data.signCount, 0x0102_0304, "big-endian")
        XCTAssertNil(data.attestedCredential)
        XCTAssertNil(data.extensions)
    }

    func testAttestedCredentialDataAndExtensions() throws {
        let extensions = map([("credProps", map([("rk", .bool(true))]))])
        let data = try AuthenticatorData(bytes([.userPresent, .attestedCredentialData, .extensionData], attested: true, extensions: extensions))
        let credential = try XCTUnwrap(data.attestedCredential)
        XCTAssertEqual(credential.aaguid, authenticator.aaguid)
        XCTAssertEqual(credential.credentialID, authenticator.credentialID)
        XCTAssertEqual(credential.publicKey.encoded, CBOREncoder.encode(authenticator.key.cose))
        XCTAssertEqual(data.extensions, extensions)
    }

    func testFlagsMustMatchTheParts() {
        assertMalformed(bytes([.userPresent, .attestedCredentialData]), "AT without data")
        assertMalformed(bytes([.userPresent], attested: true), "data without AT")
        assertMalformed(bytes([.userPresent, .extensionData]), "ED without extensions")
        assertMalformed(bytes([.userPresent], extensions: map([])), "extensions without ED")
        assertMalformed(bytes([.userPresent, .extensionData], extensions: .array([])), "extensions not a map")
        assertMalformed(bytes([.userPresent, .backedUp]), "BS without BE")
        assertMalformed(bytes([.userPresent]) + [0], "a trailing byte")
    }

    func testEveryTruncationIsRefused() {
        let full = bytes([.userPresent, .attestedCredentialData, .extensionData], attested: true, extensions: map([("x", 1)]))
        XCTAssertNoThrow(try AuthenticatorData(full))
        for length in 0..<full.count { assertMalformed(Array(full.prefix(length)), "\(length) bytes") }
    }

    func testCredentialIDLengthBounds() throws {
        var long = VectorAuthenticator()
        long.credentialID = [UInt8](repeating: 7, count: 1023)
        let cose = CBOREncoder.encode(long.key.cose)
        let prefix = SHA256.hash("example.com") + [0x41, 0, 0, 0, 0] + long.aaguid
        XCTAssertEqual(try AuthenticatorData(prefix + [0x03, 0xFF] + long.credentialID + cose).attestedCredential?.credentialID.count, 1023)
        assertMalformed(prefix + [0x04, 0x00] + long.credentialID + [7] + cose, "1024 bytes")
        assertMalformed(prefix + [0x00, 0x00] + cose, "empty")
        assertMalformed(prefix + [0x00, 0x40] + [UInt8](repeating: 7, count: 10), "longer than what follows")
    }
}
