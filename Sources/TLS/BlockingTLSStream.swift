import Platform

/// TLS over a `BlockingSocket`, through the TLS layer: the handshake and the peer's
/// verification (`PeerName`: host name or IP address) happen on creation, and the socket's
/// timeouts bound every step. The one TLS client stream of the provider HTTP client and the
/// SMTP client.
public final class BlockingTLSStream: BlockingStream {
    private let session: TLSConnection
    private let socket: BlockingSocket

    public init(context: TLSClientContext, over socket: BlockingSocket, host: String) throws(TLSError) {
        self.socket = socket
        session = try context.connection(overSocket: socket.fd, to: PeerName(host))
        try session.completeHandshake()
    }

    deinit { close() }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(BlockingStreamError) -> Int {
        do { return try session.readSome(into: buffer) } catch { throw Self.streamError(error) }
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(BlockingStreamError) {
        do { try session.writeAll(bytes) } catch { throw Self.streamError(error) }
    }

    public func close() {
        session.shutdown()
        socket.close()
    }

    private static func streamError(_ error: TLSError) -> BlockingStreamError {
        BlockingStreamError(error.kind == .timedOut ? .timedOut : .failed, error.description)
    }
}
