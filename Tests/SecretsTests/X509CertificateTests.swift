import Foundation
import Secrets
import TestSupport
import XCTest

final class X509CertificateTests: XCTestCase {
    /// Certificates made once with the `openssl` command line: root → intermediate → leaf (P-256),
    /// an RSA leaf under the root, a v1 certificate, one with two OUs and an unknown critical
    /// extension, and one with an extension twice.
    private struct Fixture: Sendable {
        let madeAt = Int64(Date().timeIntervalSince1970)
        let root: [UInt8]
        let intermediate: [UInt8]
        let leaf: [UInt8]
        let leafPoint: [UInt8]
        let leafSignature: [UInt8]
        let rsaLeaf: [UInt8]
        let rsaSignature: [UInt8]
        let versionOne: [UInt8]
        let twoUnits: [UInt8]
        let twoExtensions: [UInt8]

        init() throws {
            let scratch = try OpenSSLScratch()
            for name in ["root.key", "intermediate.key", "leaf.key"] { try scratch.makeKey(name, .p256) }
            try scratch.makeKey("rsa.key", .rsa(bits: 2048))
            root = try scratch.makeRoot("root", key: "root.key", subject: "/CN=Test Root")
            intermediate = try scratch.makeCertificate(
                "intermediate", key: "intermediate.key", subject: "/CN=Test Intermediate", issuer: "root", issuerKey: "root.key",
                extensions: ["basicConstraints=critical,CA:TRUE", "keyUsage=critical,keyCertSign"])
            leaf = try scratch.makeCertificate(
                "leaf", key: "leaf.key", subject: "/C=SE/O=Acme AB/OU=Authenticator Attestation/CN=Acme Key", issuer: "intermediate",
                issuerKey: "intermediate.key",
                extensions: ["basicConstraints=critical,CA:FALSE", "1.3.6.1.4.1.45724.1.1.4=DER:04:10:000102030405060708090a0b0c0d0e0f", "1.2.3.4=DER:05:00"])
            leafPoint = try scratch.p256Point("leaf.key")
            leafSignature = try scratch.sign(X509CertificateTests.message, with: "leaf.key")
            rsaLeaf = try scratch.makeCertificate(
                "rsa", key: "rsa.key", subject: "/CN=RSA Leaf", issuer: "root", issuerKey: "root.key", extensions: ["basicConstraints=CA:FALSE"])
            rsaSignature = try scratch.sign(X509CertificateTests.message, with: "rsa.key")
            versionOne = try scratch.makeCertificate("v1", key: "leaf.key", subject: "/CN=Old", issuer: "root", issuerKey: "root.key", extensions: [])
            twoUnits = try scratch.makeCertificate(
                "units", key: "leaf.key", subject: "/C=SE/O=Acme/OU=One/OU=Two/CN=Both", issuer: "root", issuerKey: "root.key",
                extensions: ["basicConstraints=CA:FALSE", "1.2.3.4=critical,DER:05:00"])
            // 1.2.3.5 (06 03 2A 03 05) renamed 1.2.3.4 in the DER: a repeated extension openssl would not write.
            let distinct = try scratch.makeCertificate(
                "distinct", key: "leaf.key", subject: "/CN=Twice", issuer: "root", issuerKey: "root.key",
                extensions: ["1.2.3.4=DER:05:00", "1.2.3.5=DER:05:00"])
            guard let at = (0..<distinct.count - 4).first(where: { Array(distinct[$0..<$0 + 5]) == [0x06, 0x03, 0x2A, 0x03, 0x05] }) else {
                throw TestFailure("the second extension's OID is not in the certificate")
            }
            var twice = distinct
            twice[at + 4] = 0x04
            twoExtensions = twice
        }
    }

    private static let message = utf8("signed by an attestation key")
    private static let made = Result { try Fixture() }

    private func fixture() throws -> Fixture { try Self.made.get() }

    func testParsesDERAndPEMAndRefusesTrailingBytesAndGarbage() throws {
        let fixture = try fixture()
        let leaf = try X509Certificate(der: fixture.leaf)
        XCTAssertEqual(leaf.der, fixture.leaf)
        let pem = "-----BEGIN CERTIFICATE-----\n" + Base64.encode(fixture.leaf) + "\n-----END CERTIFICATE-----\n"
        XCTAssertEqual(try X509Certificate(pem: pem).der, fixture.leaf)
        XCTAssertThrowsError(try X509Certificate(der: fixture.leaf + [0]))
        XCTAssertThrowsError(try X509Certificate(der: []))
        XCTAssertThrowsError(try X509Certificate(der: [0x30, 0x03, 0x02, 0x01, 0x01]))
        for length in stride(from: 0, to: fixture.leaf.count, by: 7) {
            XCTAssertThrowsError(try X509Certificate(der: Array(fixture.leaf.prefix(length))), "\(length) bytes")
        }
        XCTAssertThrowsError(try X509Certificate(pem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"))
        XCTAssertThrowsError(try X509Certificate(pem: pem + pem))
        XCTAssertThrowsError(try X509Certificate(pem: "junk\n" + pem))
    }

    func testRepeatedExtensionIsRefused() throws {
        XCTAssertThrowsError(try X509Certificate(der: try fixture().twoExtensions))
    }

    func testVersionSubjectAndBasicConstraints() throws {
        let fixture = try fixture()
        let leaf = try X509Certificate(der: fixture.leaf)
        XCTAssertEqual(leaf.version, 2)
        XCTAssertEqual(leaf.subjectFields, ["C": "SE", "O": "Acme AB", "OU": "Authenticator Attestation", "CN": "Acme Key"])
        XCTAssertFalse(leaf.isCertificateAuthority)
        XCTAssertTrue(try X509Certificate(der: fixture.root).isCertificateAuthority)
        XCTAssertTrue(try X509Certificate(der: fixture.intermediate).isCertificateAuthority)
        let old = try X509Certificate(der: fixture.versionOne)
        XCTAssertEqual(old.version, 0)
        XCTAssertFalse(old.isCertificateAuthority)
        XCTAssertEqual(try X509Certificate(der: fixture.twoUnits).subjectFields, ["C": "SE", "O": "Acme", "CN": "Both"], "both OUs left out")
    }

    func testExtensionValuesAndCriticality() throws {
        let fixture = try fixture()
        let leaf = try X509Certificate(der: fixture.leaf)
        XCTAssertEqual(leaf.extensionValue(oid: "1.3.6.1.4.1.45724.1.1.4"), [0x04, 0x10] + Array(0..<16))
        XCTAssertEqual(leaf.extensionValue(oid: "1.2.3.4"), [0x05, 0x00])
        XCTAssertEqual(leaf.extensionValue(oid: "2.5.29.19"), [0x30, 0x00], "basicConstraints CA:FALSE is an empty SEQUENCE")
        XCTAssertNil(leaf.extensionValue(oid: "1.2.840.113635.100.8.2"))
        XCTAssertNil(leaf.extensionValue(oid: "not an oid"))
        XCTAssertFalse(leaf.isCriticalExtension(oid: "1.2.3.4"))
        XCTAssertTrue(try X509Certificate(der: fixture.twoUnits).isCriticalExtension(oid: "1.2.3.4"))
        XCTAssertFalse(leaf.isCriticalExtension(oid: "1.3.6.1.4.1.45724.1.1.4"))
        XCTAssertFalse(leaf.isCriticalExtension(oid: "1.2.840.113635.100.8.2"))
    }

    func testPublicKeyAndSignaturesByKind() throws {
        let fixture = try fixture()
        let leaf = try X509Certificate(der: fixture.leaf)
        XCTAssertEqual(leaf.publicKeyX963, fixture.leafPoint)
        XCTAssertTrue(leaf.hasKey(for: .ecdsaP256SHA256))
        XCTAssertFalse(leaf.hasKey(for: .rsaPKCS1SHA256))
        XCTAssertTrue(leaf.isValidSignature(fixture.leafSignature, for: Self.message, algorithm: .ecdsaP256SHA256))
        XCTAssertFalse(leaf.isValidSignature(fixture.leafSignature, for: Self.message + [0], algorithm: .ecdsaP256SHA256))
        XCTAssertFalse(leaf.isValidSignature(fixture.leafSignature, for: Self.message, algorithm: .rsaPKCS1SHA256))

        let rsa = try X509Certificate(der: fixture.rsaLeaf)
        XCTAssertNil(rsa.publicKeyX963)
        XCTAssertTrue(rsa.hasKey(for: .rsaPKCS1SHA256))
        XCTAssertTrue(rsa.isValidSignature(fixture.rsaSignature, for: Self.message, algorithm: .rsaPKCS1SHA256))
        XCTAssertFalse(rsa.isValidSignature(fixture.rsaSignature, for: Self.message, algorithm: .ecdsaP256SHA256))
        var flipped = fixture.rsaSignature
        flipped[17] ^= 0x80
        XCTAssertFalse(rsa.isValidSignature(flipped, for: Self.message, algorithm: .rsaPKCS1SHA256))
    }

    func testChainVerifiesUpToTheGivenAnchorAtTheGivenTime() throws {
        let fixture = try fixture()
        let root = try X509Certificate(der: fixture.root)
        let intermediate = try X509Certificate(der: fixture.intermediate)
        let leaf = try X509Certificate(der: fixture.leaf)
        let now = fixture.madeAt + 60
        XCTAssertTrue(X509Certificate.chainIsValid(leafFirst: [leaf, intermediate], anchors: [root], at: now))
        XCTAssertTrue(X509Certificate.chainIsValid(leafFirst: [leaf, intermediate, root], anchors: [root], at: now))
        XCTAssertTrue(X509Certificate.chainIsValid(leafFirst: [try X509Certificate(der: fixture.rsaLeaf)], anchors: [root], at: now))
        XCTAssertFalse(X509Certificate.chainIsValid(leafFirst: [leaf], anchors: [root], at: now), "the intermediate is missing")
        XCTAssertFalse(X509Certificate.chainIsValid(leafFirst: [leaf, intermediate], anchors: [], at: now))
        XCTAssertFalse(X509Certificate.chainIsValid(leafFirst: [leaf, intermediate, root], anchors: [], at: now), "a root in the chain is no anchor")
        XCTAssertFalse(X509Certificate.chainIsValid(leafFirst: [leaf, intermediate], anchors: [leaf], at: now))
        XCTAssertFalse(X509Certificate.chainIsValid(leafFirst: [], anchors: [root], at: now))
        XCTAssertFalse(X509Certificate.chainIsValid(leafFirst: [try X509Certificate(der: fixture.twoUnits)], anchors: [root], at: now), "an unknown critical extension")
        XCTAssertFalse(X509Certificate.chainIsValid(leafFirst: [leaf, intermediate], anchors: [root], at: fixture.madeAt - 86_400), "not yet valid")
        XCTAssertFalse(X509Certificate.chainIsValid(leafFirst: [leaf, intermediate], anchors: [root], at: fixture.madeAt + 3 * 86_400), "expired")
    }
}
