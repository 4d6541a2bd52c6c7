import Foundation
import Secrets
import TestSupport
import XCTest

final class P256Tests: XCTestCase {
    private let message = utf8("challenge bytes from identity.challenge")

    func testSignatureFromPrivateKeyVerifies() {
        let key = P256PrivateKey()
        let signature = key.signature(for: message)
        XCTAssertEqual(signature.first, 0x30)
        XCTAssertLessThanOrEqual(signature.count, 72)
        XCTAssertTrue(key.publicKey.isValidSignature(der: signature, for: message))
        XCTAssertTrue(key.publicKey.isValidSignature(der: key.signature(for: []), for: []))
    }

    func testPublicKeyIsUncompressedX963AndRoundTrips() throws {
        let key = P256PrivateKey()
        XCTAssertEqual(key.publicKey.x963.count, 65)
        XCTAssertEqual(key.publicKey.x963.first, 0x04)
        let reparsed = try P256PublicKey(x963: key.publicKey.x963)
        XCTAssertEqual(reparsed, key.publicKey)
        XCTAssertTrue(reparsed.isValidSignature(der: key.signature(for: message), for: message))
    }

    func testWrongMessageIsRejected() {
        let key = P256PrivateKey()
        let signature = key.signature(for: message)
        XCTAssertFalse(key.publicKey.isValidSignature(der: signature, for: message + [0]))
        XCTAssertFalse(key.publicKey.isValidSignature(der: signature, for: []))
    }

    func testSignatureUnderAnotherKeyIsRejected() {
        let signer = P256PrivateKey(), other = P256PrivateKey()
        XCTAssertFalse(other.publicKey.isValidSignature(der: signer.signature(for: message), for: message))
    }

    func testEveryFlippedBitIsRejected() {
        let key = P256PrivateKey()
        let signature = key.signature(for: message)
        for bit in 0..<(signature.count * 8) {
            var tampered = signature
            tampered[bit / 8] ^= UInt8(1) << UInt8(bit % 8)
            XCTAssertFalse(key.publicKey.isValidSignature(der: tampered, for: message), "bit \(bit)")
        }
    }

    func testTruncatedAndExtendedDERIsRejected() {
        let key = P256PrivateKey()
        let signature = key.signature(for: message)
        for length in 0..<signature.count {
            XCTAssertFalse(key.publicKey.isValidSignature(der: Array(signature.prefix(length)), for: message))
        }
        XCTAssertFalse(key.publicKey.isValidSignature(der: signature + [0], for: message))
    }

    func testGarbageDERIsRejectedWithoutCrashing() {
        let key = P256PrivateKey()
        let garbage: [[UInt8]] = [
            [], [0x30], [0x30, 0x00], [0x30, 0x80, 0x00, 0x00], [0x02, 0x01, 0x01],
            [0x30, 0xff] + [UInt8](repeating: 0x41, count: 300),
            [0x30, 0x84, 0xff, 0xff, 0xff, 0xff, 0x02, 0x01, 0x01],
            [UInt8](repeating: 0, count: 72), [UInt8](repeating: 0xff, count: 4096),
        ]
        for bytes in garbage { XCTAssertFalse(key.publicKey.isValidSignature(der: bytes, for: message)) }
        for _ in 0..<200 {
            let random = SecureRandom.bytes(Int(SecureRandom.uniform(below: 80)))
            XCTAssertFalse(key.publicKey.isValidSignature(der: random, for: message))
        }
    }

    /// OpenSSL accepts high-S signatures (it checks only 0 < s < n), and so do we: iOS
    /// (SecKeyCreateSignature) does not normalise S, so about half of real device signatures
    /// are high-S. A challenge is single use, so the malleability does not matter here.
    func testHighSVariantOfValidSignatureIsAccepted() throws {
        let key = P256PrivateKey()
        let signature = key.signature(for: message)
        let (r, s) = try XCTUnwrap(TestDER.parse(signature))
        let otherS = TestDER.subtract(TestDER.order, s)
        XCTAssertNotEqual(TestDER.isHigh(s), TestDER.isHigh(otherS))  // exactly one of them is high-S
        let variant = TestDER.encode(r: r, s: otherS)
        XCTAssertNotEqual(variant, signature)
        XCTAssertEqual(TestDER.encode(r: r, s: s), signature)  // our DER helper re-encodes faithfully
        XCTAssertTrue(key.publicKey.isValidSignature(der: variant, for: message))
    }

    func testZeroOrOutOfRangeRAndSAreRejected() throws {
        let key = P256PrivateKey()
        let (r, s) = try XCTUnwrap(TestDER.parse(key.signature(for: message)))
        let zero = [UInt8](repeating: 0, count: 32)
        for (badR, badS) in [(zero, s), (r, zero), (zero, zero), (TestDER.order, s), (r, TestDER.order)] {
            XCTAssertFalse(key.publicKey.isValidSignature(der: TestDER.encode(r: badR, s: badS), for: message))
        }
    }

    func testVerificationIsSafeFromManyThreadsAtOnce() {
        let key = P256PrivateKey()
        let publicKey = key.publicKey
        let signature = key.signature(for: message)
        let message = self.message
        let failures = Counter()
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            let good = publicKey.isValidSignature(der: signature, for: message)
            let bad = publicKey.isValidSignature(der: signature, for: message + [UInt8(index)])
            if !good || bad { failures.add() }
        }
        XCTAssertEqual(failures.value, 0)
    }

    // X9.63 validation.

    func testOffCurvePointIsRefused() {
        var point = P256PrivateKey().publicKey.x963
        point[64] ^= 0x01
        XCTAssertThrowsError(try P256PublicKey(x963: point))
    }

    func testCompressedAndHybridFormsAreRefused() {
        let point = P256PrivateKey().publicKey.x963
        let x = Array(point[1...32])
        let yIsOdd = point[64] & 1 == 1
        XCTAssertThrowsError(try P256PublicKey(x963: [yIsOdd ? 0x03 : 0x02] + x))
        XCTAssertThrowsError(try P256PublicKey(x963: [yIsOdd ? 0x07 : 0x06] + point.dropFirst()))  // hybrid
        XCTAssertThrowsError(try P256PublicKey(x963: [0x02] + point.dropFirst()))
    }

    func testWrongLengthsAreRefused() {
        let point = P256PrivateKey().publicKey.x963
        for bytes in [[], [0x04], Array(point.dropLast()), point + [0], Array(point.dropFirst()), point + point] {
            XCTAssertThrowsError(try P256PublicKey(x963: bytes), "length \(bytes.count)")
        }
    }

    func testAllZeroAndInfinityAreRefused() {
        XCTAssertThrowsError(try P256PublicKey(x963: [UInt8](repeating: 0, count: 65)))
        XCTAssertThrowsError(try P256PublicKey(x963: [0x04] + [UInt8](repeating: 0, count: 64)))
        XCTAssertThrowsError(try P256PublicKey(x963: [0x00]))
    }

    func testCoordinateNotReducedModPIsRefused() {
        // X = p (not a field element) with an arbitrary Y.
        let p = hex("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff")
        XCTAssertThrowsError(try P256PublicKey(x963: [0x04] + p + [UInt8](repeating: 1, count: 32)))
    }

    func testErrorForRefusedKeyCarriesADescription() {
        XCTAssertThrowsError(try P256PublicKey(x963: [0x04] + [UInt8](repeating: 7, count: 64))) { error in
            XCTAssertFalse(String(describing: error).isEmpty)
        }
    }
}
