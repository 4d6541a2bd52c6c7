import Foundation
import Secrets
import XCTest

/// Project Wycheproof vectors from `$LATCHKEY_SHARED_DATA/wycheproof/` (skipped when unset).
final class WycheproofTests: XCTestCase {
    private func load(_ name: String) throws -> [String: Any] {
        guard let root = ProcessInfo.processInfo.environment["LATCHKEY_SHARED_DATA"], !root.isEmpty else {
            throw XCTSkip("LATCHKEY_SHARED_DATA is not set")
        }
        let url = URL(fileURLWithPath: root).appendingPathComponent("wycheproof").appendingPathComponent(name)
        let data = try Data(contentsOf: url)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    private func groups(_ file: [String: Any]) throws -> [[String: Any]] {
        try XCTUnwrap(file["testGroups"] as? [[String: Any]])
    }

    private func tests(_ group: [String: Any]) throws -> [[String: Any]] {
        try XCTUnwrap(group["tests"] as? [[String: Any]])
    }

    private func bytes(_ object: [String: Any], _ key: String) throws -> [UInt8] {
        try XCTUnwrap(Hex.decode(try XCTUnwrap(object[key] as? String)), "field \(key)")
    }

    /// Every case must agree: "valid" verifies, "invalid" does not (this includes BER/non-minimal
    /// encodings, r or s out of range, and high-S cases marked valid). This file version has no
    /// "acceptable" cases; should one appear, its outcome is printed rather than asserted, since
    /// Wycheproof leaves that choice to the implementation.
    func testECDSAP256SHA256VectorsAllAgree() throws {
        let file = try load("ecdsa_secp256r1_sha256_test.json")
        var checked = 0
        for group in try groups(file) {
            let publicKeyObject = try XCTUnwrap(group["publicKey"] as? [String: Any])
            let key = try P256PublicKey(x963: try bytes(publicKeyObject, "uncompressed"))
            XCTAssertEqual(group["sha"] as? String, "SHA-256")
            for test in try tests(group) {
                let id = test["tcId"] as? Int ?? -1
                let result = try XCTUnwrap(test["result"] as? String)
                let verified = key.isValidSignature(der: try bytes(test, "sig"), for: try bytes(test, "msg"))
                switch result {
                case "valid": XCTAssertTrue(verified, "tcId \(id) \(test["comment"] ?? "") should verify")
                case "invalid": XCTAssertFalse(verified, "tcId \(id) \(test["comment"] ?? "") should not verify")
                default: print("Wycheproof ECDSA tcId \(id) acceptable -> \(verified)")
                }
                checked += 1
            }
        }
        XCTAssertEqual(checked, file["numberOfTests"] as? Int)
    }

    /// ecdh_secp256r1_ecpoint_test.json: the `public` field is a bare X9.63 point. For our
    /// uncompressed-only parser: "valid" points (all uncompressed) must be accepted; "invalid"
    /// ones (off-curve, empty encoding, bad compressed points) refused; the one "acceptable"
    /// case is a valid compressed point (flag CompressedPoint), which we refuse by design since
    /// iOS exports uncompressed points. The ECDH shared secrets are not ours to check.
    func testECPointVectorsAgreeWithUncompressedOnlyParser() throws {
        let file = try load("ecdh_secp256r1_ecpoint_test.json")
        var accepted = 0, refused = 0
        for group in try groups(file) {
            XCTAssertEqual(group["curve"] as? String, "secp256r1")
            for test in try tests(group) {
                let id = test["tcId"] as? Int ?? -1
                let result = try XCTUnwrap(test["result"] as? String)
                let flags = test["flags"] as? [String] ?? []
                let point = try bytes(test, "public")
                let parsed = (try? P256PublicKey(x963: point)) != nil
                switch result {
                case "valid":
                    XCTAssertEqual(point.first, 0x04, "tcId \(id): valid cases are uncompressed")
                    XCTAssertTrue(parsed, "tcId \(id) \(test["comment"] ?? "") should be accepted")
                case "invalid":
                    XCTAssertFalse(parsed, "tcId \(id) \(test["comment"] ?? "") should be refused")
                default:
                    XCTAssertTrue(flags.contains("CompressedPoint"), "tcId \(id): unexpected acceptable case")
                    XCTAssertFalse(parsed, "tcId \(id): compressed points are refused by design")
                }
                if parsed { accepted += 1 } else { refused += 1 }
            }
        }
        XCTAssertEqual(accepted + refused, file["numberOfTests"] as? Int)
        XCTAssertGreaterThan(accepted, 0)
        XCTAssertGreaterThan(refused, 0)
    }

    /// hmac_sha256_test.json: tags may be truncated (tagSize bits); a case is "valid" when the
    /// truncated HMAC equals the tag, compared in constant time as a verifier would.
    func testHMACSHA256VectorsAllAgree() throws {
        let file = try load("hmac_sha256_test.json")
        var checked = 0
        for group in try groups(file) {
            let tagBytes = try XCTUnwrap(group["tagSize"] as? Int) / 8
            for test in try tests(group) {
                let id = test["tcId"] as? Int ?? -1
                let tag = try bytes(test, "tag")
                let computed = Array(HMACSHA256.authenticate(try bytes(test, "msg"), key: try bytes(test, "key")).prefix(tagBytes))
                let matches = constantTimeEquals(computed, tag)
                XCTAssertEqual(matches, test["result"] as? String == "valid", "tcId \(id) \(test["comment"] ?? "")")
                checked += 1
            }
        }
        XCTAssertEqual(checked, file["numberOfTests"] as? Int)
    }
}
