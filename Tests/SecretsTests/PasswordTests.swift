import TestSupport
import Foundation
import Secrets
import XCTest

final class ScryptTests: XCTestCase {
    // RFC 7914 section 12 (the N = 1048576 vector is skipped: 1 GiB, and refused by our limits).
    func testScryptMatchesRFC7914VectorN16() throws {
        let key = try Scrypt.derive(password: [], salt: [], parameters: ScryptParameters(logN: 4, r: 1, p: 1), length: 64)
        XCTAssertEqual(key, hex("""
            77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442
            fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906
            """))
    }

    func testScryptMatchesRFC7914VectorN1024() throws {
        let key = try Scrypt.derive(password: utf8("password"), salt: utf8("NaCl"),
                                    parameters: ScryptParameters(logN: 10, r: 8, p: 16), length: 64)
        XCTAssertEqual(key, hex("""
            fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162
            2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640
            """))
    }

    func testScryptMatchesRFC7914VectorN16384() throws {
        let key = try Scrypt.derive(password: utf8("pleaseletmein"), salt: utf8("SodiumChloride"),
                                    parameters: ScryptParameters(logN: 14, r: 8, p: 1), length: 64)
        XCTAssertEqual(key, hex("""
            7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2
            d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887
            """))
    }

    func testScryptRefusesParametersOutsideLimits() {
        let absurd = [
            ScryptParameters(logN: 0, r: 8, p: 1), ScryptParameters(logN: 23, r: 1, p: 1),
            ScryptParameters(logN: 20, r: 8, p: 1), // 1 GiB
            ScryptParameters(logN: 10, r: 0, p: 1), ScryptParameters(logN: 10, r: 8, p: 0),
            ScryptParameters(logN: 4, r: 1 << 20, p: 1 << 20), ScryptParameters(logN: 10, r: 8, p: 64),
        ]
        for parameters in absurd {
            XCTAssertFalse(parameters.isWithinLimits, "\(parameters)")
            XCTAssertThrowsError(try Scrypt.derive(password: [1], salt: [2], parameters: parameters, length: 32))
        }
        XCTAssertTrue(ScryptParameters.interactive.isWithinLimits)
        XCTAssertTrue(ScryptParameters(logN: 22, r: 1, p: 1).isWithinLimits)
    }
}

final class PasswordHasherTests: XCTestCase {
    /// Cheap parameters (1 MiB) so the suite stays fast; the default is exercised once below.
    private let cheap = ScryptParameters(logN: 10, r: 8, p: 1)

    func testDefaultHashHasExactPHCFormAndVerifies() throws {
        let start = Date()
        let phc = try PasswordHasher.hash("correct horse battery staple")
        let elapsed = Date().timeIntervalSince(start)
        print("scrypt ln=15,r=8,p=1 hash took \(Int(elapsed * 1000)) ms")
        let fields = phc.split(separator: "$", omittingEmptySubsequences: false)
        XCTAssertEqual(fields.count, 5)
        XCTAssertEqual(fields[0], "")
        XCTAssertEqual(fields[1], "scrypt")
        XCTAssertEqual(fields[2], "ln=15,r=8,p=1")
        XCTAssertEqual(fields[3].count, 22)  // 16 bytes, unpadded standard base64
        XCTAssertEqual(fields[4].count, 43)  // 32 bytes
        XCTAssertFalse(fields[3].contains("=") || fields[4].contains("="))
        XCTAssertTrue(PasswordHasher.verify("correct horse battery staple", against: phc))
        XCTAssertFalse(PasswordHasher.needsRehash(phc, current: .interactive))
    }

    func testRoundTripAcceptsTheRightPasswordAndRefusesAWrongOne() throws {
        let phc = try PasswordHasher.hash("pässwörd 🔐", parameters: cheap)
        XCTAssertTrue(PasswordHasher.verify("pässwörd 🔐", against: phc))
        XCTAssertFalse(PasswordHasher.verify("pässwörd 🔓", against: phc))
        XCTAssertFalse(PasswordHasher.verify("", against: phc))
        XCTAssertFalse(PasswordHasher.verify("pässwörd 🔐 ", against: phc))
    }

    func testSamePasswordGetsADifferentSaltEachTime() throws {
        XCTAssertNotEqual(try PasswordHasher.hash("pw", parameters: cheap), try PasswordHasher.hash("pw", parameters: cheap))
    }

    func testTamperedHashOrSaltOrParametersAreRefused() throws {
        let phc = try PasswordHasher.hash("secret", parameters: cheap)
        var fields = phc.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        func with(_ index: Int, _ value: String) -> String {
            var copy = fields
            copy[index] = value
            return copy.joined(separator: "$")
        }
        func flipFirst(_ text: String) -> String {
            let first = text.first!
            return (first == "A" ? "B" : "A") + text.dropFirst()
        }
        XCTAssertFalse(PasswordHasher.verify("secret", against: with(4, flipFirst(fields[4]))))
        XCTAssertFalse(PasswordHasher.verify("secret", against: with(3, flipFirst(fields[3]))))
        XCTAssertFalse(PasswordHasher.verify("secret", against: with(2, "ln=11,r=8,p=1")))
        XCTAssertFalse(PasswordHasher.verify("secret", against: with(2, "ln=10,r=8,p=2")))
        // The hash truncated to 16 bytes would be a valid prefix of the scrypt output: refused by length.
        let short = Base64URL.decode(fields[4])!.prefix(16)
        let shortB64 = Base64.encode(Array(short)).replacingOccurrences(of: "=", with: "")
        XCTAssertFalse(PasswordHasher.verify("secret", against: with(4, shortB64)))
        fields[0] = ""
        XCTAssertTrue(PasswordHasher.verify("secret", against: fields.joined(separator: "$")))
    }

    func testMalformedPHCStringsAreRefused() throws {
        let phc = try PasswordHasher.hash("secret", parameters: cheap)
        let parts = phc.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        let salt = parts[3], hash = parts[4]
        let malformed = [
            "", "$", "$scrypt$", "scrypt$ln=10,r=8,p=1$\(salt)$\(hash)",
            "$scrypt$ln=10,r=8,p=1$\(salt)", "$scrypt$ln=10,r=8,p=1$\(salt)$\(hash)$",
            "$scrypt$ln=10,r=8,p=1$\(salt)$\(hash)\n", " \(phc)",
            "$argon2id$ln=10,r=8,p=1$\(salt)$\(hash)", "$SCRYPT$ln=10,r=8,p=1$\(salt)$\(hash)",
            "$scrypt$ln=10,p=1,r=8$\(salt)$\(hash)", "$scrypt$r=8,ln=10,p=1$\(salt)$\(hash)",
            "$scrypt$ln=010,r=8,p=1$\(salt)$\(hash)", "$scrypt$ln=+10,r=8,p=1$\(salt)$\(hash)",
            "$scrypt$ln=10,r=8$\(salt)$\(hash)", "$scrypt$ln=10,r=8,p=1,x=1$\(salt)$\(hash)",
            "$scrypt$ln=10, r=8,p=1$\(salt)$\(hash)", "$scrypt$ln=,r=8,p=1$\(salt)$\(hash)",
            "$scrypt$n=1024,r=8,p=1$\(salt)$\(hash)",
            "$scrypt$ln=10,r=8,p=1$\(salt)==$\(hash)", "$scrypt$ln=10,r=8,p=1$\(salt)$\(hash)=",
            "$scrypt$ln=10,r=8,p=1$-\(salt.dropFirst())$\(hash)",  // url-safe alphabet
            "$scrypt$ln=10,r=8,p=1$$\(hash)", "$scrypt$ln=10,r=8,p=1$\(salt)$",
            "$scrypt$ln=10,r=8,p=1$AAAA$\(hash)",            // 3-byte salt
            "$scrypt$ln=10,r=8,p=1$AAAAAAAAAAAAAAAAAAAA$\(hash)",  // 15-byte salt
            "$scrypt$ln=10,r=8,p=1$\(salt)$AAAAAAAAAAA",     // 8-byte hash
            // Absurd parameters must be refused before any work is done.
            "$scrypt$ln=23,r=8,p=1$\(salt)$\(hash)", "$scrypt$ln=0,r=8,p=1$\(salt)$\(hash)",
            "$scrypt$ln=22,r=8,p=1$\(salt)$\(hash)", "$scrypt$ln=10,r=8,p=999999$\(salt)$\(hash)",
            "$scrypt$ln=10,r=9999999,p=1$\(salt)$\(hash)", "$scrypt$ln=99999999999999999999,r=8,p=1$\(salt)$\(hash)",
        ]
        for text in malformed {
            XCTAssertFalse(PasswordHasher.verify("secret", against: text), "accepted \(text.debugDescription)")
            XCTAssertTrue(PasswordHasher.needsRehash(text, current: cheap), "no rehash for \(text.debugDescription)")
        }
    }

    func testNeedsRehashWhenParametersChange() throws {
        let phc = try PasswordHasher.hash("secret", parameters: cheap)
        XCTAssertFalse(PasswordHasher.needsRehash(phc, current: cheap))
        XCTAssertTrue(PasswordHasher.needsRehash(phc, current: ScryptParameters(logN: 11, r: 8, p: 1)))
        XCTAssertTrue(PasswordHasher.needsRehash(phc, current: ScryptParameters(logN: 10, r: 8, p: 2)))
        XCTAssertTrue(PasswordHasher.needsRehash(phc, current: .interactive))
    }

    func testHashRefusesParametersOutsideLimitsWithoutLeakingThePassword() {
        XCTAssertThrowsError(try PasswordHasher.hash("hunter2-secret", parameters: ScryptParameters(logN: 30, r: 8, p: 1))) {
            XCTAssertFalse(String(describing: $0).contains("hunter2"))
        }
    }

    func testAnUnmatchableHashFailsEveryPasswordAfterTheFullWorkOfARealOne() throws {
        let phc = try PasswordHasher.hash("secret", parameters: cheap)
        let unmatchable = try PasswordHasher.unmatchableHash(parameters: cheap)
        for password in ["secret", "", "wrong", "hunter2"] {
            XCTAssertFalse(PasswordHasher.verify(password, against: unmatchable))
        }
        // The same work as a real verify, shown by its form rather than a clock: it parses, with
        // the same parameters and the salt and hash lengths of a real hash, so `verify` runs the
        // same scrypt before its compare (a malformed one would be refused before any work).
        XCTAssertFalse(PasswordHasher.needsRehash(unmatchable, current: cheap), "parses, with these parameters and a real hash's lengths")
        XCTAssertEqual(unmatchable.split(separator: "$")[1], phc.split(separator: "$")[1], "the same parameters")
        XCTAssertNotEqual(try PasswordHasher.unmatchableHash(parameters: cheap), unmatchable, "a fresh random salt and hash each time")
        XCTAssertThrowsError(try PasswordHasher.unmatchableHash(parameters: ScryptParameters(logN: 30, r: 8, p: 1)))
    }
}
