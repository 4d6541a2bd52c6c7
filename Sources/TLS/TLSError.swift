import Secrets

/// Why a TLS context, handshake, read or write failed: what failed, what kind of failure it was
/// (callers decide retry or not from `kind`), and OpenSSL's error queue at that moment. Never
/// carries key material or plaintext.
public struct TLSError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// A certificate, key or CA file that cannot be loaded or does not match, or a setup call
        /// refused: an operator's mistake, retrying will not help.
        case configuration
        /// The peer's certificate is not trusted for the name or address we asked for (unknown CA,
        /// self-signed, expired, another host): retrying will not help.
        case untrustedPeer
        /// The handshake failed for another reason (no common protocol version, the peer hung up,
        /// not TLS at all).
        case handshake
        /// A blocking socket's send or receive timeout ran out.
        case timedOut
        /// Reading or writing after the handshake failed (reset, fatal alert, a close without
        /// close_notify, which could be a truncation).
        case io
    }

    public let kind: Kind
    /// What failed, for operators ("certificate of localhost not trusted: certificate has expired").
    public let context: String
    /// OpenSSL's error queue (oldest first) when the failure happened; emptied by taking it.
    public let openSSLErrors: [String]

    public init(_ kind: Kind, _ context: String, openSSLErrors: [String] = []) {
        self.kind = kind
        self.context = context
        self.openSSLErrors = openSSLErrors
    }

    /// An error for a failed OpenSSL call: takes this thread's error queue with it.
    static func openSSL(_ kind: Kind, _ context: String) -> TLSError {
        TLSError(kind, context, openSSLErrors: drainOpenSSLErrorQueue())
    }

    public var description: String {
        openSSLErrors.isEmpty ? context : "\(context) (\(openSSLErrors.joined(separator: "; ")))"
    }
}
