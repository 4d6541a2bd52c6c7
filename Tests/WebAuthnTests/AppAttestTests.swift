import Foundation
import Secrets
import TestSupport
import WebAuthn
import XCTest

/// App Attest's checks (AppAttest.swift) against a chain in Apple's shape, made here with the
/// openssl command line: a P-384 root CA, a P-384 intermediate CA, and a P-256 leaf whose key is
/// the App Attest key and which carries the nonce extension. Each refusal changes one thing in an
/// otherwise valid attestation or assertion (the leaf's nonce is made to match whatever authData
/// it is given), so the reason answered is the one check under test. A real iPhone's attestation
/// is held to the verifier by interop/run_app_attest.sh.
final class AppAttestTests: XCTestCase {
    fileprivate static let appID = "TEAMID1234.com.example.latchkey"
    private static let receipt = Array("Apple's receipt, kept and not read".utf8)
    private static let clientDataHash = SHA256.hash(Array("the server's one-time challenge".utf8))
    private static let clientData = Array("POST /v1/transfer {\"amount\":100}".utf8)

    private var authority: AppAttestAuthority!

    override func setUpWithError() throws {
        try super.setUpWithError()
        authority = try AppAttestAuthority.shared()
    }

    // MARK: Attestation

    func testAttestationInApplesShapeIsAccepted() throws {
        let key = try verify(try attestation(AttestationParts()))
        XCTAssertEqual(key.keyID, authority.keyID)
        XCTAssertEqual(key.publicKey, authority.publicKey)
        XCTAssertEqual(key.appID, Self.appID)
        XCTAssertEqual(key.environment, .development)
        XCTAssertEqual(key.receipt, Self.receipt)
    }

    func testAttestationAnswersWhichAcceptedAppIDItIsFor() throws {
        let key = try verify(try attestation(AttestationParts()), policy: policy(appIDs: ["OTHERTEAM1.com.example.other", Self.appID]))
        XCTAssertEqual(key.appID, Self.appID)
    }

    func testAttestationForAnotherAppIDIsRefused() throws {
        let made = try attestation(AttestationParts())
        assertRefused(.rpIDMismatch) { () throws(WebAuthnError) in try verify(made, policy: policy(appIDs: ["TEAMID1234.com.example.other"])) }
        assertRefused(.rpIDMismatch) { () throws(WebAuthnError) in try verify(made, policy: policy(appIDs: [Self.appID.lowercased()])) }
        assertRefused(.rpIDMismatch) { () throws(WebAuthnError) in try verify(made, policy: policy(appIDs: [])) }
    }

    func testDevelopmentKeyIsRefusedWhereProductionIsRequired() throws {
        let made = try attestation(AttestationParts())
        assertRefused(.badAttestation) { () throws(WebAuthnError) in try verify(made, policy: policy(.production)) }
    }

    func testProductionKeyIsAcceptedInProductionOnly() throws {
        let made = try attestation(AttestationParts(aaguid: Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)))
        XCTAssertEqual(try verify(made, policy: policy(.production)).environment, .production)
        assertRefused(.badAttestation) { () throws(WebAuthnError) in try verify(made, policy: policy(.development)) }
    }

    func testAttestationPastTheLeafsValidityIsRefused() throws {
        let made = try attestation(AttestationParts())
        let fourDays: Int64 = 4 * 24 * 3600  // the leaf lives three days, as Apple's do; the CAs ten years
        assertRefused(.badAttestation) { () throws(WebAuthnError) in try verify(made, at: Self.now() + fourDays) }
    }

    func testLeafWhoseNonceIsNotOverAuthDataAndClientDataHashIsRefused() throws {
        let made = try attestation(AttestationParts(nonce: SHA256.hash(Array("something else".utf8))))
        assertRefused(.badAttestation) { () throws(WebAuthnError) in try verify(made) }
    }

    func testAttestationForAnotherChallengeIsRefused() throws {
        let made = try attestation(AttestationParts())
        let other = SHA256.hash(Array("another challenge".utf8))
        assertRefused(.badAttestation) { () throws(WebAuthnError) in try verify(made, clientDataHash: other) }
    }

    func testAttestationForAnotherKeyIDIsRefused() throws {
        let made = try attestation(AttestationParts())
        let otherKeyID = SHA256.hash(Array("another key".utf8))
        var changed = authority.keyID
        changed[31] ^= 0x01
        assertRefused(.badAttestation) { () throws(WebAuthnError) in try verify(made, keyID: changed) }
        assertRefused(.badAttestation) { () throws(WebAuthnError) in try verify(made, keyID: otherKeyID) }
        // authData naming the other key id as its credential leaves the leaf's key the one check that fails.
        let namingOther = try attestation(AttestationParts(credentialID: otherKeyID))
        assertRefused(.badAttestation) { () throws(WebAuthnError) in try verify(namingOther, keyID: otherKeyID) }
    }

    func testCredentialIDOtherThanTheKeyIDIsRefused() throws {
        let made = try attestation(AttestationParts(credentialID: SHA256.hash(Array("another key".utf8))))
        assertRefused(.badAttestation) { () throws(WebAuthnError) in try verify(made) }
    }

    func testAttestationWhoseCounterIsNotZeroIsRefused() throws {
        let made = try attestation(AttestationParts(counter: 1))
        assertRefused(.badAttestation) { () throws(WebAuthnError) in try verify(made) }
    }

    func testChainUnderAnotherRootIsRefused() throws {
        let made = try attestation(AttestationParts(issuer: .other))
        assertRefused(.badAttestation) { () throws(WebAuthnError) in try verify(made) }
        // The same attestation under its own root passes: the root is what was refused.
        XCTAssertEqual(try verify(made, policy: policy(roots: [authority.otherRoot])).keyID, authority.keyID)
    }

    // MARK: Assertion

    func testAssertionsAreAcceptedWhileTheCounterGrows() throws {
        let key = try attestedKey()
        XCTAssertEqual(try AppAttest.verifyAssertion(try assertion(counter: 1).encoded, clientData: Self.clientData, key: key, storedCounter: 0), 1)
        XCTAssertEqual(try AppAttest.verifyAssertion(try assertion(counter: 2).encoded, clientData: Self.clientData, key: key, storedCounter: 1), 2)
    }

    func testAssertionWhoseCounterDidNotGrowIsRefused() throws {
        let key = try attestedKey()
        let made = try assertion(counter: 1).encoded
        for stored: UInt32 in [1, 2] {
            assertRefused(.counterRegressed) { () throws(WebAuthnError) in
                try AppAttest.verifyAssertion(made, clientData: Self.clientData, key: key, storedCounter: stored)
            }
        }
    }

    func testAssertionForAnotherAppIDIsRefused() throws {
        let key = try attestedKey()
        let made = try assertion(counter: 1, appID: "TEAMID1234.com.example.other").encoded
        assertRefused(.rpIDMismatch) { () throws(WebAuthnError) in
            try AppAttest.verifyAssertion(made, clientData: Self.clientData, key: key, storedCounter: 0)
        }
    }

    func testAssertionWithAnyByteOfItsSignatureFlippedIsRefused() throws {
        let key = try attestedKey()
        let made = try assertion(counter: 1)
        for index in made.signature.indices {
            var signature = made.signature
            signature[index] ^= 0xff
            let tampered = AssertionParts(authenticatorData: made.authenticatorData, signature: signature).encoded
            assertRefused(.badSignature) { () throws(WebAuthnError) in
                try AppAttest.verifyAssertion(tampered, clientData: Self.clientData, key: key, storedCounter: 0)
            }
        }
    }

    func testAssertionOverOtherClientDataIsRefused() throws {
        let key = try attestedKey()
        let made = try assertion(counter: 1).encoded
        assertRefused(.badSignature) { () throws(WebAuthnError) in
            try AppAttest.verifyAssertion(made, clientData: Self.clientData + [0x20], key: key, storedCounter: 0)
        }
    }

    // MARK: Helpers

    private static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    private func policy(
        _ environment: AppAttest.Environment = .development, appIDs: [String] = [appID], roots: [X509Certificate]? = nil
    ) -> AppAttest.Policy {
        AppAttest.Policy(appIDs: appIDs, environment: environment, roots: roots ?? [authority.root])
    }

    private func verify(
        _ attestation: [UInt8], keyID: [UInt8]? = nil, clientDataHash: [UInt8] = clientDataHash, policy: AppAttest.Policy? = nil,
        at now: Int64 = now()
    ) throws(WebAuthnError) -> AppAttest.AttestedKey {
        try AppAttest.verifyAttestation(
            attestation, keyID: keyID ?? authority.keyID, clientDataHash: clientDataHash, policy: policy ?? self.policy(), now: now)
    }

    /// The attestation object for `parts`: authData as the device lays it out, a leaf made for it.
    private func attestation(_ parts: AttestationParts) throws -> [UInt8] {
        let credentialID = parts.credentialID ?? authority.keyID
        let authenticatorData =
            SHA256.hash(parts.appID) + [0x40] + bigEndian(parts.counter) + parts.aaguid
            + [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xff)] + credentialID
            + COSEKey.encoding(p256: try P256PublicKey(x963: authority.publicKey))
        let nonce = parts.nonce ?? SHA256.hash(authenticatorData + Self.clientDataHash)
        let leaf = try authority.leaf(nonce: nonce, issuer: parts.issuer)
        let statement = CBOR.map([
            (.text("x5c"), .array([.bytes(leaf), .bytes(authority.intermediate(parts.issuer))])), (.text("receipt"), .bytes(Self.receipt)),
        ])
        return CBOREncoder.encode(.map([
            (.text("fmt"), .text("apple-appattest")), (.text("attStmt"), statement), (.text("authData"), .bytes(authenticatorData)),
        ]))
    }

    private func attestedKey() throws -> AppAttest.AttestedKey { try verify(try attestation(AttestationParts())) }

    /// An assertion as `generateAssertion` makes it: the App Attest key signs
    /// SHA-256(authenticatorData || SHA-256(clientData)) with ECDSA over SHA-256.
    private func assertion(counter: UInt32, appID: String = appID) throws -> AssertionParts {
        let authenticatorData = SHA256.hash(appID) + [0x40] + bigEndian(counter)
        let nonce = SHA256.hash(authenticatorData + SHA256.hash(Self.clientData))
        return AssertionParts(authenticatorData: authenticatorData, signature: try authority.sign(nonce))
    }

    private func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) } }

    private func assertRefused<T>(
        _ reason: WebAuthnError.Reason, file: StaticString = #filePath, line: UInt = #line, _ body: () throws(WebAuthnError) -> T
    ) {
        do {
            _ = try body()
            XCTFail("expected \(reason.rawValue), it was accepted", file: file, line: line)
        } catch {
            XCTAssertEqual(error.reason, reason, "\(error)", file: file, line: line)
        }
    }
}

/// What one attestation holds, each part changeable on its own; the defaults are a device's.
private struct AttestationParts {
    var appID = AppAttestTests.appID
    var aaguid = Array("appattestdevelop".utf8)
    var counter: UInt32 = 0
    /// nil: the key id, as Apple's are.
    var credentialID: [UInt8]? = nil
    /// nil: SHA-256(authData || clientDataHash), as Apple's are.
    var nonce: [UInt8]? = nil
    var issuer: AppAttestAuthority.Issuer = .apple
}

private struct AssertionParts {
    let authenticatorData: [UInt8]
    let signature: [UInt8]

    var encoded: [UInt8] {
        CBOREncoder.encode(.map([(.text("signature"), .bytes(signature)), (.text("authenticatorData"), .bytes(authenticatorData))]))
    }
}

/// Two chains in Apple's shape, made once per test process with the openssl command line in a
/// directory removed at exit: P-384 root and intermediate CAs (one pair standing for Apple's, one
/// for another authority's), and the P-256 App Attest key; a leaf per attestation.
private final class AppAttestAuthority: Sendable {
    /// Which intermediate signs a leaf.
    enum Issuer: String, Sendable {
        case apple, other
    }

    let root: X509Certificate
    let otherRoot: X509Certificate
    /// The App Attest key's 65-byte X9.63 point; its private key stays in the directory.
    let publicKey: [UInt8]
    var keyID: [UInt8] { SHA256.hash(publicKey) }
    private let intermediates: [Issuer: [UInt8]]
    private let directory: String

    static func shared() throws -> AppAttestAuthority { try made.get() }

    private static let made = Result { try AppAttestAuthority(directory: NSTemporaryDirectory() + "latchkey-app-attest-\(getpid())") }

    private init(directory: String) throws {
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "latchkey-app-attest-\(getpid())") }
        var roots: [Issuer: X509Certificate] = [:]
        var intermediates: [Issuer: [UInt8]] = [:]
        for issuer in [Issuer.apple, .other] {
            let root = "\(issuer.rawValue)-root", intermediate = "\(issuer.rawValue)-intermediate"
            try Self.openssl(in: directory, [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-384", "-nodes", "-sha384", "-days", "3650",
                "-subj", "/CN=Test App Attestation Root CA/O=Latchkey Tests/ST=California",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                "-keyout", "\(root).key", "-out", "\(root).pem",
            ])
            try Self.openssl(in: directory, [
                "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-384", "-nodes",
                "-subj", "/CN=Test App Attestation CA 1/O=Latchkey Tests/ST=California",
                "-keyout", "\(intermediate).key", "-out", "\(intermediate).csr",
            ])
            try "basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n".write(
                toFile: "\(directory)/\(intermediate).ext", atomically: true, encoding: .utf8)
            try Self.openssl(in: directory, [
                "x509", "-req", "-in", "\(intermediate).csr", "-CA", "\(root).pem", "-CAkey", "\(root).key",
                "-set_serial", String(UInt32.random(in: 1...UInt32.max)), "-days", "3650", "-sha384",
                "-extfile", "\(intermediate).ext", "-outform", "DER", "-out", "\(intermediate).der",
            ])
            roots[issuer] = try X509Certificate(pem: String(contentsOfFile: "\(directory)/\(root).pem", encoding: .utf8))
            intermediates[issuer] = Array(try Data(contentsOf: URL(fileURLWithPath: "\(directory)/\(intermediate).der")))
        }
        try Self.openssl(in: directory, ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "app-attest.key"])
        try Self.openssl(in: directory, ["pkey", "-in", "app-attest.key", "-pubout", "-outform", "DER", "-out", "app-attest.pub"])
        // A P-256 SubjectPublicKeyInfo ends with the 65-byte uncompressed point.
        let publicKeyInfo = Array(try Data(contentsOf: URL(fileURLWithPath: "\(directory)/app-attest.pub")))
        publicKey = Array(publicKeyInfo.suffix(65))
        guard let apple = roots[.apple], let other = roots[.other] else { throw TestFailure("the roots were not made") }
        root = apple
        otherRoot = other
        self.intermediates = intermediates
    }

    func intermediate(_ issuer: Issuer) -> [UInt8] { intermediates[issuer] ?? [] }

    /// The DER leaf for the App Attest key: three days from now, signed by `issuer`'s
    /// intermediate, with `nonce` in 1.2.840.113635.100.8.2 as SEQUENCE { [1] EXPLICIT OCTET STRING }.
    func leaf(nonce: [UInt8], issuer: Issuer) throws -> [UInt8] {
        let name = "leaf-\(UUID().uuidString)"
        let intermediate = "\(issuer.rawValue)-intermediate"
        let nonceExtension = [0x30, UInt8(nonce.count + 4), 0xa1, UInt8(nonce.count + 2), 0x04, UInt8(nonce.count)] + nonce
        let extensions = [
            "basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature", "1.2.840.113635.100.8.2=DER:\(Hex.encode(nonceExtension))",
        ].joined(separator: "\n") + "\n"
        try extensions.write(toFile: "\(directory)/\(name).ext", atomically: true, encoding: .utf8)
        // Named as Apple names its leaves: the key id in hex.
        let subject = "/CN=\(Hex.encode(keyID))/OU=AAA Certification/O=Latchkey Tests"
        try Self.openssl(in: directory, ["req", "-new", "-key", "app-attest.key", "-subj", subject, "-out", "\(name).csr"])
        try Self.openssl(in: directory, [
            "x509", "-req", "-in", "\(name).csr", "-CA", "\(intermediate).der", "-CAform", "DER", "-CAkey", "\(intermediate).key",
            "-set_serial", String(UInt32.random(in: 1...UInt32.max)), "-days", "3", "-sha256", "-extfile", "\(name).ext",
            "-outform", "DER", "-out", "\(name).der",
        ])
        return Array(try Data(contentsOf: URL(fileURLWithPath: "\(directory)/\(name).der")))
    }

    /// A DER ECDSA signature over SHA-256 of `message` with the App Attest key.
    func sign(_ message: [UInt8]) throws -> [UInt8] {
        let name = "message-\(UUID().uuidString)"
        try Data(message).write(to: URL(fileURLWithPath: "\(directory)/\(name)"))
        try Self.openssl(in: directory, ["dgst", "-sha256", "-sign", "app-attest.key", "-out", "\(name).sig", name])
        return Array(try Data(contentsOf: URL(fileURLWithPath: "\(directory)/\(name).sig")))
    }

    private static func openssl(in directory: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let text = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestFailure("openssl \(arguments.first ?? "") failed: \(String(decoding: text, as: UTF8.self))")
        }
    }
}
