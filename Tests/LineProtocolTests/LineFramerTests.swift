import TestSupport
import XCTest

@testable import LineProtocol

final class LineFramerTests: XCTestCase {
    private func drain(_ framer: inout LineFramer) -> [FramedLine] {
        var lines: [FramedLine] = []
        while let line = framer.next() { lines.append(line) }
        return lines
    }

    private func line(_ text: String) -> FramedLine { .line(Array(text.utf8)) }

    private let stream = Array("{\"a\":1}\nsecond line\r\n\n\r\nlast é€😀\npartial".utf8)
    private let expected: [String] = ["{\"a\":1}", "second line", "", "", "last é€😀"]

    func testWholeInputYieldsEveryCompleteLine() {
        var framer = LineFramer(maxLineBytes: 64)
        framer.append(stream)
        XCTAssertEqual(drain(&framer), expected.map(line))
        XCTAssertTrue(framer.hasPartialLine)
        XCTAssertEqual(framer.bufferedByteCount, "partial".utf8.count)
        XCTAssertNil(framer.next())
    }

    /// Every `\n` ends a line, an oversized one's too, however the stream is chunked; whether the
    /// lines were handed out yet does not matter.
    func testEndedLinesCountEveryNewlineOnceInAnyChunking() {
        let oversized = Array(repeating: UInt8(ascii: "x"), count: 100) + [0x0A]
        let input = stream + oversized + Array("tail".utf8)
        var whole = LineFramer(maxLineBytes: 64)
        whole.append(input)
        XCTAssertEqual(whole.endedLineCount, 6, "five lines, then \"partial\" runs into the oversized one")
        var byByte = LineFramer(maxLineBytes: 64)
        for (index, byte) in input.enumerated() {
            byByte.append(CollectionOfOne(byte))
            if index % 3 == 0 { _ = drain(&byByte) }
        }
        XCTAssertEqual(byByte.endedLineCount, 6)
        XCTAssertTrue(byByte.hasPartialLine)
    }

    func testByteByByteInputYieldsTheSameLines() {
        var framer = LineFramer(maxLineBytes: 64)
        var lines: [FramedLine] = []
        for byte in stream {
            framer.append(CollectionOfOne(byte))
            lines += drain(&framer)
        }
        XCTAssertEqual(lines, expected.map(line))
        XCTAssertEqual(framer.bufferedByteCount, "partial".utf8.count)
    }

    /// Feeds `stream` 200 times, each time cut into random chunks of 1-16 bytes; `take` hands out
    /// lines after each chunk and whatever is left is drained at the end. Each feed's lines.
    private func linesFromRandomChunks(
        seed: UInt64, taking take: (inout LineFramer, inout SeededGenerator) -> [FramedLine]
    ) -> [[FramedLine]] {
        var generator = SeededGenerator(seed: seed)
        return (0..<200).map { _ in
            var framer = LineFramer(maxLineBytes: 64)
            var lines: [FramedLine] = []
            var position = 0
            while position < stream.count {
                let end = min(stream.count, position + Int.random(in: 1...16, using: &generator))
                stream[position..<end].withUnsafeBytes { framer.append($0) }
                lines += take(&framer, &generator)
                position = end
            }
            return lines + drain(&framer)
        }
    }

    func testRandomChunksYieldTheSameLines() {
        let feeds = linesFromRandomChunks(seed: 42) { framer, generator in
            Bool.random(using: &generator) ? drain(&framer) : []
        }
        for lines in feeds { XCTAssertEqual(lines, expected.map(line)) }
    }

    /// The server reads each line where the framer holds it: a span's bytes are its line's until
    /// the framer is next changed (the drained buffer is compacted then, not when the last line
    /// goes out), however the stream was chunked.
    func testSpansLendEachLineInPlaceUntilTheFramerIsNextChanged() {
        let feeds = linesFromRandomChunks(seed: 7) { framer, _ in
            var lines: [FramedLine] = []
            while let span = framer.nextSpan() {
                guard case .line(let range) = span else {
                    XCTFail("no line here is oversized")
                    return lines
                }
                lines.append(.line(framer.withBytes(of: range) { Array($0) }))
            }
            return lines
        }
        for lines in feeds { XCTAssertEqual(lines, expected.map(line)) }
    }

    func testSharedLinesKeepTheirBytesWhenTheFramerChangesWhileTheyAreHeld() {
        var generator = SeededGenerator(seed: 11)
        for _ in 0..<200 {
            var framer = LineFramer(maxLineBytes: 64)
            // Every slice is held while later chunks are appended and the framer compacts.
            var held: [ArraySlice<UInt8>] = []
            var position = 0
            while position < stream.count {
                let end = min(stream.count, position + Int.random(in: 1...16, using: &generator))
                stream[position..<end].withUnsafeBytes { framer.append($0) }
                while let shared = framer.nextShared() {
                    guard case .line(let slice) = shared else { return XCTFail("no line here is oversized") }
                    held.append(slice)
                }
                position = end
            }
            XCTAssertEqual(held.map { String(decoding: $0, as: UTF8.self) }, expected)
        }
    }

    func testCarriageReturnIsStrippedOnlyBeforeTheNewline() {
        var framer = LineFramer(maxLineBytes: 64)
        framer.append(Array("a\r\nb\rc\n\r\r\n".utf8))
        XCTAssertEqual(drain(&framer), [line("a"), line("b\rc"), line("\r")])
    }

    func testEmptyLinesAreYielded() {
        var framer = LineFramer(maxLineBytes: 8)
        framer.append(Array("\n\n\r\n".utf8))
        XCTAssertEqual(drain(&framer), [line(""), line(""), line("")])
        XCTAssertFalse(framer.hasPartialLine)
        XCTAssertEqual(framer.bufferedByteCount, 0)
    }

    func testLineOfExactlyTheLimitIsAcceptedWithOrWithoutCR() {
        var framer = LineFramer(maxLineBytes: 4)
        framer.append(Array("abcd\nabcd\r\nabcde\n".utf8))
        XCTAssertEqual(drain(&framer), [line("abcd"), line("abcd"), .oversized])
    }

    func testOversizedLineIsReportedOnceThenTheNextLineWorks() {
        var framer = LineFramer(maxLineBytes: 8)
        framer.append(Array("ok\n0123456789".utf8))
        XCTAssertEqual(drain(&framer), [line("ok"), .oversized])
        XCTAssertTrue(framer.hasPartialLine, "still discarding the oversized line")
        XCTAssertEqual(framer.bufferedByteCount, 0)
        framer.append(Array("more of the long line".utf8))
        XCTAssertEqual(drain(&framer), [])
        framer.append(Array("tail\nnext\n".utf8))
        XCTAssertEqual(drain(&framer), [line("next")])
        XCTAssertFalse(framer.hasPartialLine)
    }

    func testOversizedLineInsideOneChunkKeepsOrder() {
        var framer = LineFramer(maxLineBytes: 3)
        framer.append(Array("a\nlonglong\nb\nlonger\r\nc".utf8))
        XCTAssertEqual(drain(&framer), [line("a"), .oversized, line("b"), .oversized])
        framer.append(Array("\n".utf8))
        XCTAssertEqual(drain(&framer), [line("c")])
    }

    func testMemoryStaysBoundedWhileDiscardingATenMegabyteLine() {
        let limit = 64 * 1024
        var framer = LineFramer(maxLineBytes: limit)
        let chunk = [UInt8](repeating: 0x61, count: 4096)
        var results: [FramedLine] = []
        for _ in 0..<(10 * 1024 * 1024 / chunk.count) {
            framer.append(chunk)
            XCTAssertLessThanOrEqual(framer.bufferedByteCount, limit + 1)
            results += drain(&framer)
        }
        framer.append(Array("\n{}\n".utf8))
        results += drain(&framer)
        XCTAssertEqual(results, [.oversized, line("{}")])
        XCTAssertEqual(framer.bufferedByteCount, 0)
    }

    func testOneHugeChunkWithoutNewlineIsNotBuffered() {
        var framer = LineFramer(maxLineBytes: 1024)
        framer.append([UInt8](repeating: 0x61, count: 10 * 1024 * 1024))
        XCTAssertEqual(framer.bufferedByteCount, 0)
        XCTAssertEqual(drain(&framer), [.oversized])
    }

    func testHasPartialLineTracksUnfinishedLines() {
        var framer = LineFramer(maxLineBytes: 16)
        XCTAssertFalse(framer.hasPartialLine)
        framer.append(Array("ab".utf8))
        XCTAssertTrue(framer.hasPartialLine)
        framer.append(Array("\n".utf8))
        XCTAssertFalse(framer.hasPartialLine)
        XCTAssertEqual(framer.bufferedByteCount, 3, "complete line still waiting for next()")
        XCTAssertEqual(drain(&framer), [line("ab")])
        XCTAssertEqual(framer.bufferedByteCount, 0)
    }

    func testManyLinesFedInSmallChunksStayLinearAndBounded() {
        // A 60 KB line in 1-byte chunks, then many short lines: the buffer holds each byte once and
        // each byte is searched for `\n` once (counted, never timed: a framer that searched its
        // whole partial line again on every chunk would scan about 1.8 G bytes here).
        var framer = LineFramer(maxLineBytes: 64 * 1024)
        let long = [UInt8](repeating: 0x62, count: 60 * 1024)
        var appended = 0
        for byte in long {
            framer.append(CollectionOfOne(byte))
            appended += 1
            if framer.bufferedByteCount != appended { return XCTFail("\(framer.bufferedByteCount) bytes held after \(appended) appended") }
        }
        framer.append(CollectionOfOne(0x0A))
        XCTAssertEqual(drain(&framer), [.line(long)])
        var fed = long.count + 1
        for index in 0..<10_000 {
            let bytes = Array("\(index)\n".utf8)
            framer.append(bytes)
            fed += bytes.count
            XCTAssertEqual(framer.next(), line("\(index)"))
        }
        XCTAssertEqual(framer.bufferedByteCount, 0)
        XCTAssertEqual(framer.scannedByteCount, fed, "every byte searched exactly once")
    }
}
