import COpenSSL
import Platform

/// What a handshake, read or write did: moved this many bytes (0: the handshake finished, or a
/// read met the peer's close_notify), or needs the socket readable or writable before it can go on
/// (on a blocking socket: its timeout ran out, or a signal interrupted it).
public enum TLSProgress: Sendable, Equatable {
    case done(Int)
    case wantsRead
    case wantsWrite
}

/// One TLS session over a socket the caller owns, in either role. Non-blocking and blocking
/// sockets alike: every call does what the socket allows and says what it waits for. Reads and
/// writes go straight between the caller's buffers and OpenSSL: this layer keeps no plaintext.
/// One thread at a time (OpenSSL's error queue is per thread, and so is the answer to
/// `SSL_get_error`).
public final class TLSConnection {
    private let ssl: OpaquePointer
    /// Keeps the context alive as long as the session (OpenSSL counts it too; this says so in Swift).
    private let context: SSLContext
    /// The client's expected peer; nil in the server role.
    private let peer: PeerName?
    private var shutDown = false
    /// The first handshake has completed. Later TLS 1.3 messages (session tickets, key updates)
    /// put OpenSSL back "in init" for a moment; that is not a handshake to time out or to blame.
    private var established = false
    /// The last call stopped on EINTR rather than a full buffer or a timeout.
    private(set) var wasInterrupted = false
    /// A pinning client's certificates (`TLSClientContext`), until its peer has been checked.
    private var pinnedCertificates: [[UInt8]]?

    init(context: SSLContext, socket fd: Int32, peer: PeerName?, pinnedCertificates: [[UInt8]]? = nil) throws(TLSError) {
        guard let ssl = SSL_new(context.pointer) else { throw .openSSL(.configuration, "SSL_new failed") }
        self.ssl = ssl
        self.context = context
        self.peer = peer
        self.pinnedCertificates = pinnedCertificates
        guard SSL_set_fd(ssl, fd) == 1 else { throw .openSSL(.configuration, "SSL_set_fd failed") }
        guard let peer else {
            SSL_set_accept_state(ssl)
            return
        }
        try expect(peer)
        SSL_set_connect_state(ssl)
    }

    deinit { SSL_free(ssl) }

    /// Host names go in SNI and are matched against the certificate's DNS names; IP addresses
    /// are matched against its IP addresses only (a DNS name or common name that spells the
    /// address does not count) and never go in SNI.
    private func expect(_ peer: PeerName) throws(TLSError) {
        guard let parameters = SSL_get0_param(ssl) else { throw .openSSL(.configuration, "SSL_get0_param failed") }
        switch peer {
        case .hostName(let name):
            guard !name.isEmpty else { throw TLSError(.configuration, "no host name to verify") }
            guard lk_SSL_set_tlsext_host_name(ssl, name) == 1 else { throw .openSSL(.configuration, "cannot send the server name \(name)") }
            guard X509_VERIFY_PARAM_set1_host(parameters, name, 0) == 1 else {
                throw .openSSL(.configuration, "cannot set the host name \(name) to verify")
            }
        case .ipAddress(let address):
            guard X509_VERIFY_PARAM_set1_ip_asc(parameters, address) == 1 else {
                throw .openSSL(.configuration, "cannot set the IP address \(address) to verify")
            }
        }
    }

    /// True until the handshake has completed.
    public var isHandshaking: Bool {
        if !established && SSL_is_init_finished(ssl) == 1 { established = true }
        return !established
    }

    /// The host name the client sent in SNI (server role), if any.
    public var requestedServerName: String? {
        SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name).map { String(cString: $0) }
    }

    /// Runs the handshake as far as the socket allows; `.done(0)` once it is complete.
    public func handshake() throws(TLSError) -> TLSProgress {
        try perform(.handshake) { SSL_do_handshake($0) }
    }

    /// Up to `buffer.count` bytes of plaintext from one call into OpenSSL (which may first have to
    /// finish the handshake). `.done(0)`: the peer closed the session with close_notify.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(TLSError) -> TLSProgress {
        precondition(!buffer.isEmpty, "a TLS read needs room")
        return try perform(.read) { SSL_read($0, buffer.baseAddress, Int32(clamping: buffer.count)) }
    }

    /// Some of `bytes` (partial writes are on: at least one record), or what it waits for. After
    /// `.wantsRead` or `.wantsWrite` the caller retries with the same bytes at the same offset
    /// (the buffer may have moved).
    public func write(_ bytes: UnsafeRawBufferPointer) throws(TLSError) -> TLSProgress {
        precondition(!bytes.isEmpty, "a TLS write needs bytes")
        return try perform(.write) { SSL_write($0, bytes.baseAddress, Int32(clamping: bytes.count)) }
    }

    /// Sends close_notify once, if the handshake finished, and never waits for the peer's: the
    /// caller is closing the socket either way, so whether it went out changes nothing, and
    /// its result is deliberately not checked.
    public func shutdown() {
        guard !shutDown else { return }
        shutDown = true
        if !isHandshaking { _ = SSL_shutdown(ssl) }
        ERR_clear_error()
    }

    private enum Operation: String { case handshake, read, write }

    /// One call into OpenSSL on a clean error queue (`SSL_get_error` reads it), and its outcome:
    /// a positive result is bytes moved (1 for a finished handshake, reported as `.done(0)`).
    private func perform(_ operation: Operation, _ call: (OpaquePointer) -> Int32) throws(TLSError) -> TLSProgress {
        ERR_clear_error()
        let result = call(ssl)
        if pinnedCertificates != nil, SSL_is_init_finished(ssl) == 1 { try checkPinnedPeer() }
        guard result > 0 else { return try progress(of: result, in: operation) }
        established = true
        return .done(operation == .handshake ? 0 : Int(result))
    }

    /// Once the handshake of a pinning client is done, before any plaintext moves: the peer's
    /// certificate verified (chain and name) or is one of the pinned ones.
    private func checkPinnedPeer() throws(TLSError) {
        guard let pinned = pinnedCertificates else { return }
        let verified = SSL_get_verify_result(ssl)
        if verified != Int(X509_V_OK) {
            guard let certificate = SSL_get1_peer_certificate(ssl) else {
                throw TLSError(.untrustedPeer, "\(peer.map { "\($0)" } ?? "the peer") presented no certificate")
            }
            defer { X509_free(certificate) }
            guard pinned.contains(derBytes(of: certificate)) else {
                let reason = String(cString: X509_verify_cert_error_string(verified))
                throw TLSError(.untrustedPeer, "certificate of \(peer.map { "\($0)" } ?? "the peer") not trusted: \(reason)")
            }
        }
        pinnedCertificates = nil
    }

    /// Maps a failed handshake, read or write (`result` <= 0) to what it waits for, the clean
    /// close, or an error that names the failure and carries OpenSSL's queue.
    private func progress(of result: Int32, in operation: Operation) throws(TLSError) -> TLSProgress {
        let systemError = errno
        let failure = SSL_get_error(ssl, result)
        wasInterrupted = systemError == EINTR
        switch failure {
        case SSL_ERROR_WANT_READ: return .wantsRead
        case SSL_ERROR_WANT_WRITE: return .wantsWrite
        case SSL_ERROR_ZERO_RETURN where operation == .read: return .done(0)
        default: break
        }
        let handshaking = isHandshaking
        if let peer, handshaking {
            let verified = SSL_get_verify_result(ssl)
            if verified != Int(X509_V_OK) {
                let reason = String(cString: X509_verify_cert_error_string(verified))
                throw .openSSL(.untrustedPeer, "certificate of \(peer) not trusted: \(reason)")
            }
        }
        let what = handshaking ? "TLS handshake\(peer.map { " with \($0)" } ?? "") failed" : "TLS \(operation.rawValue) failed"
        let detail = failure == SSL_ERROR_SYSCALL && systemError != 0 ? ": \(String(cString: strerror(systemError)))" : ""
        throw .openSSL(handshaking ? .handshake : .io, what + detail)
    }
}
