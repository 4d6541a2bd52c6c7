import Platform

/// Who a client expects at the other end: a host name (checked against the certificate's DNS
/// names, and sent as SNI) or an IP address (checked against its IP addresses; RFC 6066 §3
/// forbids an address in SNI). One rule for every client, so a URL and an SMTP host that name
/// the same peer are verified the same way.
public enum PeerName: Sendable, Equatable, CustomStringConvertible {
    case hostName(String)
    case ipAddress(String)

    /// `host` as written in a URL without brackets: `mail.example.com`, `192.0.2.1`, `::1`.
    public init(_ host: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1 {
            self = .ipAddress(host)
        } else {
            self = .hostName(host)
        }
    }

    public var description: String {
        switch self {
        case .hostName(let name), .ipAddress(let name): name
        }
    }
}
