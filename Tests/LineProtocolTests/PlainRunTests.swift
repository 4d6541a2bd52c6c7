@testable import LineProtocol
import TestSupport
import XCTest

/// The word-at-a-time scan against a byte-by-byte one: every byte value at every offset of a
/// word, after plain bytes of every kind (borrows in the word arithmetic must never flag an
/// earlier byte, nor hide a later one), and random strings mixing them.
final class PlainRunTests: XCTestCase {
    private func byteByByte(_ bytes: [UInt8], from start: Int, nonASCII: Bool) -> Int {
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x20 || byte == 0x22 || byte == 0x5C || (nonASCII && byte >= 0x80) { break }
            index += 1
        }
        return index
    }

    private func check(_ bytes: [UInt8], from start: Int, _ context: @autoclosure () -> String) {
        for nonASCII in [true, false] {
            let scanned = bytes.withUnsafeBufferPointer { PlainRun.end(in: $0, from: start, stoppingAtNonASCII: nonASCII) }
            let expected = byteByByte(bytes, from: start, nonASCII: nonASCII)
            // Compared first: half a million assertions would slow the suite for nothing.
            if scanned != expected { XCTFail("\(context()) nonASCII \(nonASCII): \(scanned), not \(expected)") }
        }
    }

    func testEveryByteValueAtEveryOffsetAfterEveryKindOfPlainByte() {
        // Plain bytes just above the thresholds the arithmetic subtracts.
        let fillers: [UInt8] = [0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7F, 0x80, 0xA0, 0xFF, 0x61]
        for filler in fillers {
            for length in [1, 7, 8, 9, 15, 16, 17, 24] {
                for offset in 0..<length {
                    for value in 0...255 {
                        var bytes = [UInt8](repeating: filler, count: length)
                        bytes[offset] = UInt8(value)
                        check(bytes, from: 0, "filler \(filler) length \(length) offset \(offset) value \(value)")
                    }
                }
            }
        }
    }

    func testRandomStringsFromEveryStart() {
        var random = SeededGenerator(seed: 7)
        let alphabet: [UInt8] = [0x00, 0x1F, 0x20, 0x21, 0x22, 0x5C, 0x41, 0x7F, 0x80, 0xC3, 0xA9, 0xFF]
        for _ in 0..<3_000 {
            let length = Int.random(in: 0..<40, using: &random)
            let bytes = (0..<length).map { _ in
                Int.random(in: 0..<4, using: &random) == 0 ? alphabet.randomElement(using: &random)! : UInt8.random(in: 0x23...0x5B, using: &random)
            }
            for start in 0...length { check(bytes, from: start, "\(bytes) from \(start)") }
        }
    }

    func testAnEmptyBufferEndsAtOnce() {
        XCTAssertEqual(PlainRun.end(in: UnsafeBufferPointer(start: nil, count: 0), from: 0, stoppingAtNonASCII: true), 0)
    }
}
