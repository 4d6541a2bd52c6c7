import COpenSSL

/// The client role: the peer's certificate chain must lead to a trusted CA (the system store, or
/// the certificates in one PEM file instead) and name the host or IP address we asked for.
/// One context serves every connection of a client, from any thread.
public final class TLSClientContext: Sendable {
    let context: SSLContext

    /// `trustedCertificatesFile`: PEM certificates to trust instead of the system store (a private
    /// CA, or a test server's self-signed certificate).
    public init(trustedCertificatesFile: String? = nil) throws(TLSError) {
        context = try SSLContext(method: TLS_client_method())
        if let trustedCertificatesFile {
            guard SSL_CTX_load_verify_locations(context.pointer, trustedCertificatesFile, nil) == 1 else {
                throw .openSSL(.configuration, "cannot load the CA file \(trustedCertificatesFile)")
            }
        } else {
            guard SSL_CTX_set_default_verify_paths(context.pointer) == 1 else {
                throw .openSSL(.configuration, "cannot load the system CA store")
            }
        }
        SSL_CTX_set_verify(context.pointer, SSL_VERIFY_PEER, nil)
    }

    /// TLS in the client role over the connected socket `fd` (which stays the caller's to close),
    /// expecting `peer`. The handshake runs on the first reads and writes, or through `handshake()`.
    public func connection(overSocket fd: Int32, to peer: PeerName) throws(TLSError) -> TLSConnection {
        try TLSConnection(context: context, socket: fd, peer: peer)
    }
}
