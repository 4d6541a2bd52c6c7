import COpenSSL
import Glibc

/// A TLS failure: what OpenSSL said, never key material.
public struct TLSError: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ what: String) {
        var buffer = [CChar](repeating: 0, count: 512)
        let count = lk_ERR_print_last(&buffer, buffer.count)
        let detail = count == 0 ? "" : ": " + String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        description = what + detail
    }
}

/// A server-side TLS configuration: certificate chain and private key from PEM files, TLS 1.2+.
/// Immutable once built; shared by every connection of a listener.
public final class TLSServerContext: @unchecked Sendable {
    let context: OpaquePointer

    public init(certificateChainFile: String, privateKeyFile: String) throws(TLSError) {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw TLSError("SSL_CTX_new failed") }
        self.context = context
        guard lk_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1 else { throw TLSError("cannot require TLS 1.2") }
        lk_tls_ctx_set_nonblocking_modes(context)
        guard SSL_CTX_use_certificate_chain_file(context, certificateChainFile) == 1 else {
            throw TLSError("cannot load certificate chain \(certificateChainFile)")
        }
        guard SSL_CTX_use_PrivateKey_file(context, privateKeyFile, SSL_FILETYPE_PEM) == 1 else {
            throw TLSError("cannot load private key \(privateKeyFile)")
        }
        guard SSL_CTX_check_private_key(context) == 1 else { throw TLSError("private key does not match the certificate") }
    }

    deinit { SSL_CTX_free(context) }

    /// A transport for one accepted socket; the handshake runs on the first reads and writes.
    public func makeTransport(for socket: Socket) throws(TLSError) -> Transport {
        try TLSTransport(socket: socket, context: self)
    }
}

/// TLS over a non-blocking socket: `SSL_read`/`SSL_write` with WANT_READ/WANT_WRITE mapped to
/// `.wouldBlock`, and `wantsWritable` set while OpenSSL waits for the socket to take bytes.
final class TLSTransport: Transport {
    private let ssl: OpaquePointer
    private let context: TLSServerContext
    private(set) var wantsWritable = false
    private var closed = false

    init(socket: Socket, context: TLSServerContext) throws(TLSError) {
        guard let ssl = SSL_new(context.context) else { throw TLSError("SSL_new failed") }
        self.ssl = ssl
        self.context = context
        guard SSL_set_fd(ssl, socket.fd) == 1 else {
            SSL_free(ssl)
            throw TLSError("SSL_set_fd failed")
        }
        SSL_set_accept_state(ssl)
    }

    deinit { SSL_free(ssl) }

    var isHandshaking: Bool { SSL_is_init_finished(ssl) != 1 }

    /// Fills as much of `buffer` as OpenSSL has decrypted or can decrypt now, so no record is
    /// left waiting inside OpenSSL while epoll sees nothing new on the socket.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> IOResult<Int> {
        var total = 0
        while total < buffer.count {
            let chunk = Int32(clamping: buffer.count - total)
            let count = SSL_read(ssl, buffer.baseAddress! + total, chunk)
            if count > 0 {
                total += Int(count)
                continue
            }
            let error = SSL_get_error(ssl, count)
            switch error {
            case SSL_ERROR_WANT_READ:
                wantsWritable = false
                return total > 0 ? .done(total) : .wouldBlock
            case SSL_ERROR_WANT_WRITE:
                wantsWritable = true
                return total > 0 ? .done(total) : .wouldBlock
            case SSL_ERROR_ZERO_RETURN:
                return .done(total)
            default:
                if total > 0 { return .done(total) }
                if error == SSL_ERROR_SYSCALL && Glibc.errno == 0 { return .done(0) }
                throw TLSError("TLS read failed")
            }
        }
        return .done(total)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws -> IOResult<Int> {
        guard !bytes.isEmpty else { return .done(0) }
        let count = SSL_write(ssl, bytes.baseAddress, Int32(clamping: bytes.count))
        if count > 0 {
            wantsWritable = false
            return .done(Int(count))
        }
        switch SSL_get_error(ssl, count) {
        case SSL_ERROR_WANT_WRITE:
            wantsWritable = true
            return .wouldBlock
        case SSL_ERROR_WANT_READ:
            wantsWritable = false
            return .wouldBlock
        default:
            throw TLSError("TLS write failed")
        }
    }

    func close() {
        guard !closed else { return }
        closed = true
        // Best effort close_notify; never waits for the peer's.
        if SSL_is_init_finished(ssl) == 1 { _ = SSL_shutdown(ssl) }
        ERR_clear_error()
    }
}
