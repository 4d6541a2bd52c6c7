import Secrets
import TestSupport
import XCTest

final class RSAPublicKeyTests: XCTestCase {
    /// A 2048-bit key made once by `openssl genpkey`, with the signatures the tests check.
    private struct Fixture: Sendable {
        let modulus: [UInt8]
        let pkcs1: [UInt8]
        let pkcs1OverEmpty: [UInt8]
        let pss: [UInt8]

        init() throws {
            let scratch = try OpenSSLScratch()
            try scratch.makeKey("rsa.pem", .rsa(bits: 2048))
            modulus = try scratch.rsaModulus("rsa.pem")
            pkcs1 = try scratch.sign(RSAPublicKeyTests.message, with: "rsa.pem")
            pkcs1OverEmpty = try scratch.sign([], with: "rsa.pem")
            pss = try scratch.sign(RSAPublicKeyTests.message, with: "rsa.pem", options: ["rsa_padding_mode:pss"])
        }
    }

    private static let message = utf8("authenticator data and the client data's hash")
    private static let made = Result { try Fixture() }
    private let exponent: [UInt8] = [0x01, 0x00, 0x01]

    private func fixture() throws -> Fixture { try Self.made.get() }

    func testPKCS1SignatureFromOpenSSLVerifies() throws {
        let fixture = try fixture()
        let key = try RSAPublicKey(modulus: fixture.modulus, exponent: exponent)
        XCTAssertEqual(fixture.modulus.count, 256)
        XCTAssertTrue(key.isValidPKCS1SHA256Signature(fixture.pkcs1, for: Self.message))
        XCTAssertTrue(key.isValidPKCS1SHA256Signature(fixture.pkcs1OverEmpty, for: []))
    }

    func testWrongMessageAndPSSAreRefused() throws {
        let fixture = try fixture()
        let key = try RSAPublicKey(modulus: fixture.modulus, exponent: exponent)
        XCTAssertFalse(key.isValidPKCS1SHA256Signature(fixture.pkcs1, for: Self.message + [0]))
        XCTAssertFalse(key.isValidPKCS1SHA256Signature(fixture.pkcs1, for: []))
        XCTAssertFalse(key.isValidPKCS1SHA256Signature(fixture.pss, for: Self.message))
    }

    func testEveryFlippedByteAndEveryWrongLengthIsRefused() throws {
        let fixture = try fixture()
        let key = try RSAPublicKey(modulus: fixture.modulus, exponent: exponent)
        for index in fixture.pkcs1.indices {
            var tampered = fixture.pkcs1
            tampered[index] ^= 0x01
            XCTAssertFalse(key.isValidPKCS1SHA256Signature(tampered, for: Self.message), "byte \(index)")
        }
        XCTAssertFalse(key.isValidPKCS1SHA256Signature(Array(fixture.pkcs1.dropLast()), for: Self.message))
        XCTAssertFalse(key.isValidPKCS1SHA256Signature([0] + fixture.pkcs1, for: Self.message))
        XCTAssertFalse(key.isValidPKCS1SHA256Signature([], for: Self.message))
    }

    func testAnotherModulusRefusesTheSignature() throws {
        let fixture = try fixture()
        var other = fixture.modulus
        other[100] ^= 0x10
        let key = try RSAPublicKey(modulus: other, exponent: exponent)
        XCTAssertFalse(key.isValidPKCS1SHA256Signature(fixture.pkcs1, for: Self.message))
    }

    func testLeadingZerosAreIgnored() throws {
        let fixture = try fixture()
        let key = try RSAPublicKey(modulus: [0, 0] + fixture.modulus, exponent: [0] + exponent)
        XCTAssertEqual(key, try RSAPublicKey(modulus: fixture.modulus, exponent: exponent))
        XCTAssertEqual(key.modulus, fixture.modulus)
        XCTAssertEqual(key.exponent, exponent)
        XCTAssertTrue(key.isValidPKCS1SHA256Signature(fixture.pkcs1, for: Self.message))
    }

    func testModulusSizesOutside2048To8192BitsAndEvenModuliAreRefused() {
        func odd(bits: Int) -> [UInt8] {
            var bytes = [UInt8](repeating: 0xA5, count: (bits + 7) / 8)
            bytes[0] = bits % 8 == 0 ? 0x80 : UInt8(1) << UInt8(bits % 8 - 1)
            bytes[bytes.count - 1] |= 1
            return bytes
        }
        XCTAssertNoThrow(try RSAPublicKey(modulus: odd(bits: 2048), exponent: exponent))
        XCTAssertNoThrow(try RSAPublicKey(modulus: odd(bits: 8192), exponent: exponent))
        XCTAssertThrowsError(try RSAPublicKey(modulus: odd(bits: 2047), exponent: exponent))
        XCTAssertThrowsError(try RSAPublicKey(modulus: odd(bits: 1024), exponent: exponent))
        XCTAssertThrowsError(try RSAPublicKey(modulus: odd(bits: 8193), exponent: exponent))
        XCTAssertThrowsError(try RSAPublicKey(modulus: [], exponent: exponent))
        var even = odd(bits: 2048)
        even[even.count - 1] &= 0xFE
        XCTAssertThrowsError(try RSAPublicKey(modulus: even, exponent: exponent))
    }

    func testExponentMustBeOddAboveOneAndAtMost64Bits() throws {
        let modulus = try fixture().modulus
        XCTAssertNoThrow(try RSAPublicKey(modulus: modulus, exponent: [3]))
        XCTAssertNoThrow(try RSAPublicKey(modulus: modulus, exponent: [UInt8](repeating: 0xFF, count: 8)))
        for refused: [UInt8] in [[], [0], [1], [0, 1], [2], [0x01, 0x00, 0x00], [UInt8](repeating: 0xFF, count: 9)] {
            XCTAssertThrowsError(try RSAPublicKey(modulus: modulus, exponent: refused), "\(refused)")
        }
    }
}
