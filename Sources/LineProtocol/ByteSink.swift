/// Where the encoders write: an output array, or a `ByteCursor` that gathers a line's short runs
/// on the stack. `Array.append(contentsOf:)` costs about 90 instructions a call however short the
/// run, and an envelope is a dozen runs of a few bytes: gathered, it is one append.
protocol ByteSink {
    mutating func append(_ byte: UInt8)
    mutating func append(bytes: UnsafeBufferPointer<UInt8>)
    mutating func append(literal: StaticString)
    /// `value` in decimal digits.
    mutating func append(decimal value: UInt64)
}

extension Array: ByteSink where Element == UInt8 {
    mutating func append(bytes: UnsafeBufferPointer<UInt8>) { append(contentsOf: bytes) }

    mutating func append(decimal value: UInt64) {
        // Written on the stack by the cursor's own digit writer, then appended at once (UInt64.max
        // has 20 digits, so it always fits).
        _ = appendGathered(capacity: 20) { $0.append(decimal: value) }
    }
}

/// Writes into a fixed run of bytes; what does not fit is dropped and `fits` turns false, for
/// the caller to write the same to its array instead.
struct ByteCursor: ByteSink {
    private var next: UnsafeMutablePointer<UInt8>
    private let end: UnsafeMutablePointer<UInt8>
    private let start: UnsafeMutablePointer<UInt8>
    private(set) var fits = true

    init(over scratch: UnsafeMutableBufferPointer<UInt8>) {
        start = scratch.baseAddress!
        next = start
        end = start + scratch.count
    }

    var written: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: start, count: next - start) }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        guard next < end else {
            fits = false
            return
        }
        next.initialize(to: byte)
        next += 1
    }

    @inline(__always)
    mutating func append(bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        guard end - next >= bytes.count else {
            fits = false
            return
        }
        next.initialize(from: source, count: bytes.count)
        next += bytes.count
    }

    @inline(__always)
    mutating func append(literal: StaticString) {
        append(bytes: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Counted first, then written backwards where they go: no scratch digits, no copy.
    mutating func append(decimal value: UInt64) {
        var count = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            count += 1
        }
        guard end - next >= count else {
            fits = false
            return
        }
        var magnitude = value
        var digit = next + count
        repeat {
            digit -= 1
            digit.initialize(to: UInt8(truncatingIfNeeded: magnitude % 10) &+ 0x30)
            magnitude /= 10
        } while magnitude > 0
        next += count
    }
}

extension Array where Element == UInt8 {
    /// Runs `write` over a cursor on the stack and appends what it wrote in one step. False, with
    /// nothing appended, when it needed more than `capacity` bytes: the caller then writes it here.
    @inline(__always)
    mutating func appendGathered(capacity: Int, _ write: (inout ByteCursor) -> Void) -> Bool {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { scratch in
            var cursor = ByteCursor(over: scratch)
            write(&cursor)
            guard cursor.fits else { return false }
            append(contentsOf: cursor.written)
            return true
        }
    }

    /// `write` gathered on the stack when it fits in `capacity` bytes, else written here directly.
    @inline(__always)
    mutating func appendGathering(capacity: Int, _ write: (inout ByteCursor) -> Void, otherwise direct: (inout [UInt8]) -> Void) {
        if !appendGathered(capacity: capacity, write) { direct(&self) }
    }
}
