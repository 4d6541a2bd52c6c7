import COpenSSL

/// The server role: a certificate chain and its private key from PEM files (OpenSSL reads the
/// key itself, so no copy of it lives in Swift memory). One context serves every connection of a
/// listener, from any thread.
public final class TLSServerContext: Sendable {
    let context: SSLContext

    public init(certificateChainFile: String, privateKeyFile: String) throws(TLSError) {
        context = try SSLContext(method: TLS_server_method())
        guard SSL_CTX_use_certificate_chain_file(context.pointer, certificateChainFile) == 1 else {
            throw .openSSL(.configuration, "cannot load certificate chain \(certificateChainFile)")
        }
        guard SSL_CTX_use_PrivateKey_file(context.pointer, privateKeyFile, SSL_FILETYPE_PEM) == 1 else {
            throw .openSSL(.configuration, "cannot load private key \(privateKeyFile)")
        }
        guard SSL_CTX_check_private_key(context.pointer) == 1 else {
            throw .openSSL(.configuration, "private key does not match the certificate")
        }
    }

    /// TLS in the server role over the connected socket `fd` (which stays the caller's to close).
    /// The handshake runs on the first reads and writes, or through `handshake()`.
    public func connection(overSocket fd: Int32) throws(TLSError) -> TLSConnection {
        try TLSConnection(context: context, socket: fd, peer: nil)
    }
}
