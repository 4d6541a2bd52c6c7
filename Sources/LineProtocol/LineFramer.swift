#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// One framed line: its bytes without the `\n` and without a trailing `\r`, or the marker that a
/// line longer than the limit was dropped.
public enum FramedLine: Equatable, Sendable {
    case line([UInt8])
    case oversized
}

/// The next line as `nextShared()` hands it out: a slice of the framer's storage.
public enum FramedSlice: Equatable, Sendable {
    case line(ArraySlice<UInt8>)
    case oversized
}

/// Where `nextSpan()` found the next line: its bytes' range in the framer, or the marker that a
/// line longer than the limit was dropped.
public enum FramedSpan: Equatable, Sendable {
    case line(Range<Int>)
    case oversized
}

/// Splits a byte stream into `\n`-terminated lines (a trailing `\r` is tolerated).
///
/// Every byte is searched for `\n` once, when it is appended. Complete lines wait in the buffer
/// until `next()` hands them out. A line longer than `maxLineBytes` yields `.oversized` once; its
/// bytes are dropped as they arrive (never buffered beyond the limit) up to and including its `\n`.
public struct LineFramer: Sendable {
    public let maxLineBytes: Int

    private enum Event: Sendable {
        /// Line content in `buffer`, and the index just after its `\n`.
        case line(Range<Int>, next: Int)
        case oversized
    }

    private var buffer: [UInt8] = []
    /// Start of the bytes not yet handed out by `next()`.
    private var readIndex = 0
    /// Start of the unfinished line (everything before it is complete lines).
    private var partialStart = 0
    private var events: [Event] = []
    private var eventHead = 0
    /// True while dropping the rest of an oversized line until its `\n`.
    private var discarding = false
    /// Bytes searched for `\n` so far: each appended byte once, however the stream is chunked.
    private(set) var scannedByteCount = 0
    /// Lines ended so far (every `\n` appended, oversized lines' included): a caller timing the
    /// unfinished line tells by it whether that is still the same line.
    public private(set) var endedLineCount = 0

    public init(maxLineBytes: Int) {
        precondition(maxLineBytes > 0, "maxLineBytes must be positive")
        self.maxLineBytes = maxLineBytes
    }

    /// Bytes held and not yet returned by `next()` (complete lines plus the unfinished one).
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// True when `next()` has something to hand out (a line, or the marker of an oversized one).
    public var hasFramedLine: Bool { eventHead < events.count }

    /// True when an unfinished line is buffered or an oversized one is being dropped.
    public var hasPartialLine: Bool { discarding || buffer.count > partialStart }

    public mutating func append(_ bytes: some Collection<UInt8>) {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { append(buffer: $0) }
        if handled == nil {
            Array(bytes).withUnsafeBufferPointer { append(buffer: $0) }
        }
    }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        append(buffer: bytes.assumingMemoryBound(to: UInt8.self))
    }

    private mutating func append(buffer input: UnsafeBufferPointer<UInt8>) {
        compactIfDrained()
        var position = 0
        while position < input.count {
            let newline = Self.firstNewline(in: input, from: position)
            scannedByteCount += (newline.map { $0 + 1 } ?? input.count) - position
            if newline != nil { endedLineCount += 1 }
            if discarding {
                guard let newline else { return }
                discarding = false
                position = newline + 1
                continue
            }
            let segmentEnd = newline ?? input.count
            let partialCount = buffer.count - partialStart
            // Room for the content plus a possible trailing `\r`.
            if partialCount + (segmentEnd - position) > maxLineBytes + 1 {
                buffer.removeSubrange(partialStart...)
                events.append(.oversized)
                discarding = newline == nil
                position = newline.map { $0 + 1 } ?? input.count
                continue
            }
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: input[position..<segmentEnd]))
            guard let newline else { return }
            completeLine()
            position = newline + 1
        }
    }

    private mutating func completeLine() {
        var contentEnd = buffer.count
        if contentEnd > partialStart, buffer[contentEnd - 1] == 0x0D { contentEnd -= 1 }
        if contentEnd - partialStart > maxLineBytes {
            buffer.removeSubrange(partialStart...)
            events.append(.oversized)
            return
        }
        buffer.append(0x0A)
        events.append(.line(partialStart..<contentEnd, next: buffer.count))
        partialStart = buffer.count
    }

    /// `memchr`: the C library compares many bytes per step, where a loop here took one.
    private static func firstNewline(in input: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard start < input.count, let base = input.baseAddress else { return nil }
        guard let found = memchr(base + start, 0x0A, input.count - start) else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    /// The next line, copied out.
    public mutating func next() -> FramedLine? {
        switch nextSpan() {
        case nil: return nil
        case .oversized: return .oversized
        case .line(let range): return .line(Array(buffer[range]))
        }
    }

    /// The next line as a slice of the framer's own storage: no copy while the caller is done
    /// with it before the framer is next changed (a slice kept longer costs the framer a copy
    /// of its buffer then, never a wrong byte).
    public mutating func nextShared() -> FramedSlice? {
        switch nextSpan() {
        case nil: return nil
        case .oversized: return .oversized
        case .line(let range): return .line(buffer[range])
        }
    }

    /// The next line without copying it: its range, read with `withBytes(of:)`, whose bytes stay
    /// in place until the framer is next changed (`append`, `next`, `nextSpan`).
    public mutating func nextSpan() -> FramedSpan? {
        compactIfDrained()
        guard eventHead < events.count else { return nil }
        let event = events[eventHead]
        eventHead += 1
        if eventHead == events.count {
            events.removeAll(keepingCapacity: true)
            eventHead = 0
        }
        switch event {
        case .oversized:
            return .oversized
        case .line(let range, let next):
            readIndex = next
            return .line(range)
        }
    }

    /// Lends the bytes of a line `nextSpan()` just returned.
    public func withBytes<Result>(of range: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try buffer.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[range])) }
    }

    /// Once every complete line is handed out, moves the unfinished line (at most `maxLineBytes + 1`
    /// bytes, each moved at most once) to the front. Done when the framer is next changed, not
    /// when the last line is handed out, so that line's bytes stay where `nextSpan()` said.
    private mutating func compactIfDrained() {
        guard eventHead == events.count, readIndex > 0, readIndex == partialStart else { return }
        buffer.removeSubrange(0..<readIndex)
        readIndex = 0
        partialStart = 0
    }
}
