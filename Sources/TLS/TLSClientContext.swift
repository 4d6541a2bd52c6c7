import COpenSSL

/// The client role: the peer's certificate chain must lead to a trusted CA (the system store, or
/// the certificates in one PEM file instead) and name the host or IP address we asked for.
/// One context serves every connection of a client, from any thread.
public final class TLSClientContext: Sendable {
    let context: SSLContext
    /// DER of the certificates a peer may present whatever names they hold; nil: names are checked.
    let pinnedCertificates: [[UInt8]]?

    /// `trustedCertificatesFile`: PEM certificates to trust instead of the system store (a private
    /// CA, or a test server's self-signed certificate). `pinning`: a server presenting one of that
    /// file's certificates itself is trusted under any name, as a health check inside the server's
    /// container does with the server's own certificate (it reaches 127.0.0.1, which the
    /// certificate does not name); any other certificate must still chain to the file and name the peer.
    public init(trustedCertificatesFile: String? = nil, pinning: Bool = false) throws(TLSError) {
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
        if pinning, let trustedCertificatesFile {
            pinnedCertificates = try Self.certificates(in: trustedCertificatesFile)
            // The handshake goes on whatever the verification found; TLSConnection refuses the
            // peer before any byte is read or written unless it verified or is pinned.
            SSL_CTX_set_verify(context.pointer, SSL_VERIFY_NONE, nil)
        } else {
            pinnedCertificates = nil
            SSL_CTX_set_verify(context.pointer, SSL_VERIFY_PEER, nil)
        }
    }

    /// TLS in the client role over the connected socket `fd` (which stays the caller's to close),
    /// expecting `peer`. The handshake runs on the first reads and writes, or through `handshake()`.
    public func connection(overSocket fd: Int32, to peer: PeerName) throws(TLSError) -> TLSConnection {
        try TLSConnection(context: context, socket: fd, peer: peer, pinnedCertificates: pinnedCertificates)
    }

    private static func certificates(in file: String) throws(TLSError) -> [[UInt8]] {
        guard let bio = BIO_new_file(file, "r") else { throw .openSSL(.configuration, "cannot open the CA file \(file)") }
        defer { BIO_free(bio) }
        var certificates: [[UInt8]] = []
        while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
            certificates.append(derBytes(of: certificate))
            X509_free(certificate)
        }
        ERR_clear_error()  // the loop ends on "no start line"
        guard !certificates.isEmpty else { throw TLSError(.configuration, "no certificate in the CA file \(file)") }
        return certificates
    }
}

/// The DER encoding of `certificate`.
func derBytes(of certificate: OpaquePointer) -> [UInt8] {
    let length = i2d_X509(certificate, nil)
    guard length > 0 else { return [] }
    var bytes = [UInt8](repeating: 0, count: Int(length))
    bytes.withUnsafeMutableBufferPointer { buffer in
        var cursor = buffer.baseAddress
        _ = i2d_X509(certificate, &cursor)
    }
    return bytes
}
