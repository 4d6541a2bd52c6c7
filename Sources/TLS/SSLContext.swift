import COpenSSL

/// One OpenSSL `SSL_CTX`, shared by both roles: TLS 1.2 or newer, and writes that may be partial
/// and retried from a buffer that has grown or moved (what a non-blocking event loop needs; on a
/// blocking socket the caller loops anyway). Immutable once its owner has configured it, which
/// is what makes sharing it between threads safe.
final class SSLContext: @unchecked Sendable {
    let pointer: OpaquePointer

    init(method: OpaquePointer) throws(TLSError) {
        guard let pointer = SSL_CTX_new(method) else { throw .openSSL(.configuration, "SSL_CTX_new failed") }
        self.pointer = pointer
        guard lk_SSL_CTX_set_min_proto_version(pointer, TLS1_2_VERSION) == 1 else {
            throw .openSSL(.configuration, "cannot require TLS 1.2")
        }
        lk_tls_ctx_set_nonblocking_modes(pointer)
    }

    deinit { SSL_CTX_free(pointer) }
}
