import Secrets
import XCTest

@testable import Identity

/// RFC 6238 appendix B: the published vectors (8 digits, 30 s steps), per algorithm, with
/// the seeds the RFC's reference code uses (20, 32 and 64 bytes of "1234567890...").
final class TotpAlgorithmTests: XCTestCase {
    private func seed(_ length: Int) -> [UInt8] { Array(String(repeating: "1234567890", count: 7).utf8.prefix(length)) }

    func testRFC6238VectorsForSHA1SHA256AndSHA512() {
        let vectors: [(Int64, String, String, String)] = [
            (59, "94287082", "46119246", "90693936"),
            (1_111_111_109, "07081804", "68084774", "25091201"),
            (1_111_111_111, "14050471", "67062674", "99943326"),
            (1_234_567_890, "89005924", "91819424", "93441116"),
            (2_000_000_000, "69279037", "90698825", "38618901"),
            (20_000_000_000, "65353130", "77737706", "47863826"),
        ]
        for (time, sha1, sha256, sha512) in vectors {
            for (algorithm, seedLength, expected) in [(HMACAlgorithm.sha1, 20, sha1), (.sha256, 32, sha256), (.sha512, 64, sha512)] {
                let parameters = TotpParameters(algorithm: algorithm, digits: 8)
                XCTAssertEqual(
                    Totp.code(secret: seed(seedLength), step: Totp.step(at: time, parameters), parameters), expected, "\(algorithm) at \(time)")
            }
        }
    }

    func testSixDigitCodesKeepTheirLeadingZeros() {
        // 1111111109 gives 07081804 with 8 digits: its last 6 are 081804.
        XCTAssertEqual(Totp.code(secret: seed(20), step: Totp.step(at: 1_111_111_109, .standard), .standard), "081804")
    }

    func testOneStepOfSkewEachWayAndNothingAtOrBeforeTheLastAcceptedStep() {
        let secret = seed(20)
        let now: Int64 = 1_800_000_015
        let current = Totp.step(at: now, .standard)
        func code(_ step: Int64) -> String { Totp.code(secret: secret, step: step, .standard) }
        for offset in Int64(-1)...1 {
            XCTAssertEqual(Totp.matchingStep(code: code(current + offset), secret: secret, now: now, after: 0, skewSteps: 1, .standard), current + offset)
        }
        XCTAssertNil(Totp.matchingStep(code: code(current - 2), secret: secret, now: now, after: 0, skewSteps: 1, .standard))
        XCTAssertNil(Totp.matchingStep(code: code(current + 2), secret: secret, now: now, after: 0, skewSteps: 1, .standard))
        XCTAssertNil(Totp.matchingStep(code: code(current), secret: secret, now: now, after: current, skewSteps: 1, .standard), "replayed")
        XCTAssertNil(Totp.matchingStep(code: code(current - 1), secret: secret, now: now, after: current, skewSteps: 1, .standard), "older than the last")
        XCTAssertEqual(Totp.matchingStep(code: code(current + 1), secret: secret, now: now, after: current, skewSteps: 1, .standard), current + 1)
    }

    func testTheURIIsTheKeyUriFormatAuthenticatorAppsRead() {
        let uri = IdentityService.otpauthURI(secret: "JBSWY3DPEHPK3PXP", issuer: "Acme Bank", account: "alice", .standard)
        XCTAssertEqual(uri, "otpauth://totp/Acme%20Bank:alice?secret=JBSWY3DPEHPK3PXP&issuer=Acme%20Bank&algorithm=SHA1&digits=6&period=30")
    }
}
