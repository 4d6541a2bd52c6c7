import Secrets
import XCTest

final class SequenceSealerTests: XCTestCase {
    private let key = [UInt8](repeating: 7, count: 32)

    /// The construction as documented, computed apart (Python `cryptography`: AES-256-ECB over
    /// the sequence and the cut HMAC-SHA256 tag, keys derived with HMAC-SHA256).
    func testTheSealIsOneAESBlockOverTheSequenceAndItsTag() {
        let sealer = SequenceSealer(key: key, purpose: "history")
        XCTAssertEqual(sealer.seal(52, owner: "usr_a"), "T-8cE7SdkBfOLtfQ_rcxXA")
        XCTAssertEqual(sealer.seal(-1, owner: "usr_a"), "l4Uv6oxBdKyoOtLce_uckA")
    }

    func testASealOpensToItsSequenceForItsOwnerPurposeAndKeyOnly() {
        let sealer = SequenceSealer(key: key, purpose: "history")
        for sequence: Int64 in [1, 52, 1 << 40, .max, -1, .min] {
            let sealed = sealer.seal(sequence, owner: "usr_a")
            XCTAssertEqual(sealed.utf8.count, SequenceSealer.textByteCount)
            XCTAssertEqual(sealer.seal(sequence, owner: "usr_a"), sealed, "deterministic")
            XCTAssertEqual(sealer.open(sealed, owner: "usr_a"), sequence)
            XCTAssertNil(sealer.open(sealed, owner: "usr_b"))
            XCTAssertNil(sealer.open(sealed, owner: "usr_a\u{0}"))
            XCTAssertNil(SequenceSealer(key: key, purpose: "activity").open(sealed, owner: "usr_a"))
            XCTAssertNil(SequenceSealer(key: [UInt8](repeating: 8, count: 32), purpose: "history").open(sealed, owner: "usr_a"))
        }
    }

    /// Consecutive sequences share nothing visible: no common prefix, no order.
    func testConsecutiveSequencesLookUnrelated() {
        let sealer = SequenceSealer(key: key, purpose: "history")
        let sealed = (1...64).map { sealer.seal(Int64($0), owner: "usr_a") }
        XCTAssertEqual(Set(sealed).count, 64)
        XCTAssertNotEqual(sealed, sealed.sorted(), "sealed names do not sort like their sequences")
        let sharedPrefixes = zip(sealed, sealed.dropFirst()).filter { $0.prefix(3) == $1.prefix(3) }
        XCTAssertLessThan(sharedPrefixes.count, 4, "neighbours share a prefix no more often than chance")
    }

    func testEveryAlteredCharacterAndEveryOtherSpellingIsRefused() throws {
        let sealer = SequenceSealer(key: key, purpose: "history")
        let sealed = sealer.seal(52, owner: "usr_a")
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var altered = 0
        for index in sealed.indices {
            for replacement in alphabet where replacement != sealed[index] {
                var text = sealed
                text.replaceSubrange(index...index, with: String(replacement))
                if sealer.open(text, owner: "usr_a") != nil { XCTFail("\(text) opened") }
                altered += 1
            }
        }
        XCTAssertEqual(altered, 22 * 63)
        let standard = sealed.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        for other in [sealed + "==", standard == sealed ? nil : standard, String(sealed.dropLast()), sealed + "A", "", "999999999"] {
            guard let other else { continue }
            XCTAssertNil(sealer.open(other, owner: "usr_a"), other)
        }
    }
}
