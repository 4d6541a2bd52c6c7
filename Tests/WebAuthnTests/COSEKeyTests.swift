import TestSupport
import Secrets
import WebAuthn
import XCTest

final class COSEKeyTests: XCTestCase {
    private let point = P256PrivateKey().publicKey.x963

    private var x: CBOR { .bytes(Array(point[1..<33])) }
    private var y: CBOR { .bytes(Array(point[33...])) }

    private func reason(_ key: CBOR, file: StaticString = #filePath, line: UInt = #line) -> WebAuthnError.Reason? {
        reason(CBOREncoder.encode(key), file: file, line: line)
    }

    private func reason(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> WebAuthnError.Reason? {
        do {
            _ = try COSEKey(encoded: bytes)
            XCTFail("accepted", file: file, line: line)
            return nil
        } catch {
            return error.reason
        }
    }

    func testES256KeyKeepsItsBytesAndVerifies() throws {
        let privateKey = P256PrivateKey()
        let encoded = CBOREncoder.encode(map([(1, 2), (3, -7), (-1, 1), (-2, .bytes(Array(privateKey.publicKey.x963[1..<33]))), (-3, .bytes(Array(privateKey.publicKey.x963[33...])))]))
        let key = try COSEKey(encoded: encoded)
        XCTAssertEqual(key.encoded, encoded)
        XCTAssertEqual(key.algorithm, -7)
        XCTAssertEqual(key.publicKey, .es256(privateKey.publicKey))
        let message = utf8("authenticator data ‖ hash")
        XCTAssertTrue(key.isValidSignature(privateKey.signature(for: message), for: message))
        XCTAssertFalse(key.isValidSignature(privateKey.signature(for: message), for: message + [1]))
        XCTAssertFalse(key.isValidSignature([], for: message))
    }

    func testUnknownMembersAreIgnoredAndOrderDoesNotMatter() throws {
        XCTAssertNoThrow(try COSEKey(encoded: CBOREncoder.encode(map([(-3, y), (-2, x), (-1, 1), (3, -7), (1, 2), (4, .array([1])), ("note", "x")]))))
    }

    func testOtherAlgorithmsCurvesAndKeyTypesAreRefused() {
        XCTAssertEqual(reason(map([(1, 2), (3, -35), (-1, 2), (-2, x), (-3, y)])), .unsupportedAlgorithm, "ES384")
        XCTAssertEqual(reason(map([(1, 1), (3, -8), (-1, 6), (-2, x)])), .unsupportedAlgorithm, "EdDSA")
        XCTAssertEqual(reason(map([(1, 3), (3, -37), (-1, .bytes([1])), (-2, .bytes([1, 0, 1]))])), .unsupportedAlgorithm, "PS256")
        XCTAssertEqual(reason(map([(1, 2), (3, -7), (-1, 2), (-2, x), (-3, y)])), .unsupportedAlgorithm, "ES256 on P-384")
        XCTAssertEqual(reason(map([(1, 2), (3, -7), (-1, 8), (-2, x), (-3, y)])), .unsupportedAlgorithm, "secp256k1")
        let smallModulus = [UInt8](repeating: 0xC3, count: 128)
        XCTAssertEqual(reason(map([(1, 3), (3, -257), (-1, .bytes(smallModulus)), (-2, .bytes([1, 0, 1]))])), .unsupportedAlgorithm, "RSA 1024")
    }

    func testMissingOrMismatchedMembersAreRefused() {
        let refused: [(String, CBOR)] = [
            ("no kty", map([(3, -7), (-1, 1), (-2, x), (-3, y)])),
            ("no alg", map([(1, 2), (-1, 1), (-2, x), (-3, y)])),
            ("no crv", map([(1, 2), (3, -7), (-2, x), (-3, y)])),
            ("no y", map([(1, 2), (3, -7), (-1, 1), (-2, x)])),
            ("x as text", map([(1, 2), (3, -7), (-1, 1), (-2, "x"), (-3, y)])),
            ("short x", map([(1, 2), (3, -7), (-1, 1), (-2, .bytes([1, 2])), (-3, y)])),
            ("ES256 with kty RSA", map([(1, 3), (3, -7), (-1, 1), (-2, x), (-3, y)])),
            ("RS256 with kty EC2", map([(1, 2), (3, -257), (-1, .bytes([1])), (-2, .bytes([1, 0, 1]))])),
            ("RS256 without e", map([(1, 3), (3, -257), (-1, .bytes([UInt8](repeating: 0xC3, count: 256)))])),
            ("a private key", map([(1, 2), (3, -7), (-1, 1), (-2, x), (-3, y), (-4, .bytes([UInt8](repeating: 1, count: 32)))])),
            ("kty as text", map([(1, "EC2"), (3, -7), (-1, 1), (-2, x), (-3, y)])),
            ("not a map", .array([2, -7])),
        ]
        for (what, key) in refused { XCTAssertEqual(reason(key), .malformed, what) }
    }

    func testPointsOffTheCurveAreRefused() {
        var offCurve = Array(point[33...])
        offCurve[31] ^= 0x01
        XCTAssertEqual(reason(map([(1, 2), (3, -7), (-1, 1), (-2, x), (-3, .bytes(offCurve))])), .malformed)
    }

    func testTrailingBytesAndBadCBORAreRefused() {
        let encoded = CBOREncoder.encode(map([(1, 2), (3, -7), (-1, 1), (-2, x), (-3, y)]))
        XCTAssertEqual(reason(encoded + [0]), .malformed)
        XCTAssertEqual(reason(Array(encoded.dropLast())), .malformed)
        XCTAssertEqual(reason([]), .malformed)
    }
}
