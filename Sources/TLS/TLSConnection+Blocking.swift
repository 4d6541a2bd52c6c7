import Platform

/// For blocking sockets with send and receive timeouts (SO_SNDTIMEO / SO_RCVTIMEO), as the
/// provider and SMTP clients use them: "wants the socket" can only mean the timeout ran out
/// (a signal's EINTR is retried).
extension TLSConnection {
    public func completeHandshake() throws(TLSError) {
        while true {
            switch try handshake() {
            case .done: return
            case .wantsRead, .wantsWrite:
                guard wasInterrupted else { throw TLSError(.timedOut, "TLS handshake timed out") }
            }
        }
    }

    /// Writes every byte of `bytes`.
    public func writeAll(_ bytes: UnsafeRawBufferPointer) throws(TLSError) {
        var offset = 0
        while offset < bytes.count {
            switch try write(UnsafeRawBufferPointer(rebasing: bytes[offset...])) {
            case .done(let count): offset += count
            case .wantsRead, .wantsWrite:
                guard wasInterrupted else { throw TLSError(.timedOut, "TLS write timed out") }
            }
        }
    }

    /// Blocks until some plaintext arrives; 0 when the peer closed the session with close_notify.
    public func readSome(into buffer: UnsafeMutableRawBufferPointer) throws(TLSError) -> Int {
        while true {
            switch try read(into: buffer) {
            case .done(let count): return count
            case .wantsRead, .wantsWrite:
                guard wasInterrupted else { throw TLSError(.timedOut, "TLS read timed out") }
            }
        }
    }
}
