import Platform

/// How a channel moves bytes over its socket: in the clear, or through TLS.
/// Both are non-blocking; `.wouldBlock` means "call again when the socket is ready".
public protocol Transport: AnyObject {
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> IOResult<Int>
    func write(_ bytes: UnsafeRawBufferPointer) throws -> IOResult<Int>
    /// True while a TLS handshake or renegotiation needs the socket to become writable to progress.
    var wantsWritable: Bool { get }
    func close()
    /// True until a TLS handshake completes; a handshake gets as long as a line (slow clients).
    var isHandshaking: Bool { get }
}

extension Transport {
    public var isHandshaking: Bool { false }
}

/// Plain TCP.
final class PlainTransport: Transport {
    let socket: Socket

    init(socket: Socket) { self.socket = socket }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> IOResult<Int> { try socket.read(into: buffer) }
    func write(_ bytes: UnsafeRawBufferPointer) throws -> IOResult<Int> { try socket.write(bytes) }
    var wantsWritable: Bool { false }
    func close() {}
}
