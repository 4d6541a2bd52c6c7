/// Why an HTTP exchange failed before a status line arrived (connect, TLS, timeout, garbage).
/// Never carries the request body.
public struct HTTPError: Error, Sendable, CustomStringConvertible, Equatable {
    public let detail: String
    public init(_ detail: String) { self.detail = detail }
    public var description: String { detail }
}

/// An `http://` or `https://` URL: scheme, host, port, and the path with its query.
public struct HTTPURL: Sendable, Equatable, CustomStringConvertible {
    public let isTLS: Bool
    public let host: String
    public let port: Int
    public let path: String

    public init(_ text: String) throws(HTTPError) {
        let rest: Substring
        if text.hasPrefix("https://") {
            isTLS = true
            rest = text.dropFirst(8)
        } else if text.hasPrefix("http://") {
            isTLS = false
            rest = text.dropFirst(7)
        } else {
            throw HTTPError("URL must start with http:// or https://")
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        let pathPart = rest.dropFirst(authority.count)
        guard !authority.isEmpty, !authority.contains("@"), !text.contains(where: { $0.isWhitespace }) else {
            throw HTTPError("URL needs a host and no user info or spaces")
        }
        var hostPart = Substring(authority)
        var port = isTLS ? 443 : 80
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            guard let parsed = Int(authority[authority.index(after: colon)...]), (1...65535).contains(parsed) else {
                throw HTTPError("URL port must be 1-65535")
            }
            port = parsed
            hostPart = authority[..<colon]
        }
        if hostPart.hasPrefix("[") && hostPart.hasSuffix("]") { hostPart = hostPart.dropFirst().dropLast() }
        host = String(hostPart)
        self.port = port
        path = pathPart.isEmpty ? "/" : (pathPart.hasPrefix("?") ? "/" + pathPart : String(pathPart))
    }

    /// The same origin with another path (`/sms/json` under a base URL).
    public func appending(path suffix: String) -> HTTPURL {
        var copy = self
        let base = path.hasSuffix("/") ? String(path.dropLast()) : path
        copy.pathStorage = base + suffix
        return copy
    }

    private var pathStorage: String {
        get { path }
        set { self = HTTPURL(isTLS: isTLS, host: host, port: port, path: newValue) }
    }

    private init(isTLS: Bool, host: String, port: Int, path: String) {
        self.isTLS = isTLS
        self.host = host
        self.port = port
        self.path = path
    }

    public var hostHeader: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return port == (isTLS ? 443 : 80) ? bracketed : "\(bracketed):\(port)"
    }

    public var description: String { "\(isTLS ? "https" : "http")://\(hostHeader)\(path)" }
}
