/// A connected byte stream for a worker thread (a provider's HTTP API, an SMTP server): a
/// `BlockingSocket`, or TLS over one. Every read and write is bounded by the socket's I/O
/// timeout, so a peer that goes quiet costs a worker one timeout, never the thread.
public protocol BlockingStream: AnyObject {
    /// Up to `buffer.count` bytes; 0 when the peer closed the stream.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(BlockingStreamError) -> Int
    /// Every byte of `bytes`, or an error.
    func write(_ bytes: UnsafeRawBufferPointer) throws(BlockingStreamError)
    /// Idempotent.
    func close()
}

extension BlockingStream {
    /// Up to `buffer.count` bytes into `buffer`; 0 when the peer closed the stream.
    public func read(into buffer: inout [UInt8]) throws(BlockingStreamError) -> Int {
        precondition(!buffer.isEmpty, "a read needs room")
        // `withUnsafe...Bytes` rethrows untyped errors: the outcome travels out as a value.
        return try buffer.withUnsafeMutableBytes { raw in Result { () throws(BlockingStreamError) in try read(into: raw) } }.get()
    }

    /// Up to `count` bytes; empty when the peer closed the stream.
    public func read(max count: Int) throws(BlockingStreamError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let got = try read(into: &buffer)
        buffer.removeSubrange(got...)
        return buffer
    }

    public func write(_ bytes: [UInt8]) throws(BlockingStreamError) {
        guard !bytes.isEmpty else { return }
        try bytes.withUnsafeBytes { raw in Result { () throws(BlockingStreamError) in try write(raw) } }.get()
    }
}

/// Why a blocking stream failed. `kind` lets a caller decide whether to try again; `detail`
/// names the step and the system's words, never the bytes that were moving.
public struct BlockingStreamError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The host name did not resolve.
        case unresolved
        /// No address of the host accepted the connection (refused, unreachable, connect deadline).
        case unreachable
        /// A read or write waited longer than the I/O timeout.
        case timedOut
        /// A read or write failed (reset, broken pipe, a TLS record that does not verify).
        case failed
    }

    public let kind: Kind
    public let detail: String

    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String { detail }
}
