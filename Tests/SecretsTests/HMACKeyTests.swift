import Dispatch
import Secrets
import TestSupport
import XCTest

/// `HMACKey` must give exactly the tags the one-shot HMAC gives, for every algorithm, key length
/// (shorter than, equal to and longer than the hash's block) and message, and keep doing so when
/// one key serves many threads at once, as a service's key does (its first tag too, which sets
/// the key up: eight threads race to it on a fresh key; the thread sanitizer run checks the race).
final class HMACKeyTests: XCTestCase {
    // RFC 4231 section 4 (SHA-256, SHA-512) and RFC 2202 section 3 (SHA-1).
    func testAPreparedKeyMatchesThePublishedVectors() {
        let cases: [(HMACAlgorithm, [UInt8], [UInt8], String)] = [
            (.sha256, [UInt8](repeating: 0x0b, count: 20), utf8("Hi There"), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
            (.sha256, utf8("Jefe"), utf8("what do ya want for nothing?"), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
            (.sha256, Array(1...25), [UInt8](repeating: 0xcd, count: 50), "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
            (.sha256, [UInt8](repeating: 0xaa, count: 131), utf8("Test Using Larger Than Block-Size Key - Hash Key First"),
             "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
            (.sha256, [], [], "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"),
            (.sha512, utf8("Jefe"), utf8("what do ya want for nothing?"),
             "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"),
            (.sha1, utf8("Jefe"), utf8("what do ya want for nothing?"), "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
        ]
        for (algorithm, key, message, tag) in cases {
            XCTAssertEqual(HMACKey(key, algorithm: algorithm).authenticate(message), hex(tag), "\(algorithm) key of \(key.count) bytes")
        }
    }

    func testAPreparedKeyAgreesWithTheOneShotForEveryKeyAndMessageLength() {
        var generator = SystemRandomNumberGenerator()
        func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        for algorithm in HMACAlgorithm.allCases {
            for keyLength in [0, 1, 20, 31, 32, 63, 64, 65, 127, 128, 129, 200] {
                let key = bytes(keyLength)
                let prepared = HMACKey(key, algorithm: algorithm)
                // One key, many messages: a tag must not carry anything over from the one before.
                for messageLength in [0, 1, 55, 56, 63, 64, 65, 111, 112, 128, 300, 1000] {
                    let message = bytes(messageLength)
                    XCTAssertEqual(
                        prepared.authenticate(message), algorithm.authenticate(message, key: key),
                        "\(algorithm), key \(keyLength) bytes, message \(messageLength) bytes")
                }
            }
        }
    }

    func testOneKeyGivesEveryThreadTheRightTagsAtOnce() {
        let key = HMACKey(Array(0..<32))
        let messages = (0..<64).map { index in utf8("code\u{0}vr_\(index)\u{0}\(100_000 + index)") }
        let expected = messages.map { HMACSHA256.authenticate($0, key: Array(0..<32)) }
        let mismatches = Counter()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<500 {
                let index = (thread * 7 + round) % messages.count
                if key.authenticate(messages[index]) != expected[index] { mismatches.add() }
            }
        }
        XCTAssertEqual(mismatches.value, 0)
    }
}
