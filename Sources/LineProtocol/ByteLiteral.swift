extension Array where Element == UInt8 {
    /// Appends a literal's bytes as they lie in the binary. Appending `"...".utf8` walks a
    /// `String.UTF8View` byte by byte; encoders append several literals per line.
    @inlinable
    public mutating func append(literal: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }
}
