/// Where and how to reach an SMTP server, from `--smtp-url`:
///
/// - `smtp://host:port` (default port 587): STARTTLS when the server offers it;
///   `?starttls=required` refuses to go on without it, `?starttls=never` never tries.
/// - `smtps://host:port` (default port 465): TLS from the first byte (implicit TLS, RFC 8314).
/// - `user:pass@` (percent-encoded) logs in with AUTH PLAIN or LOGIN (`?auth=plain|login` picks
///   one; otherwise PLAIN when offered). Credentials are only ever sent inside TLS, unless
///   `?insecure_auth=true` (for a local relay on a trusted host).
public struct SMTPURL: Sendable, Equatable, CustomStringConvertible {
    public enum Security: String, Sendable, Equatable {
        /// STARTTLS when offered, plain otherwise.
        case opportunistic
        /// STARTTLS or fail.
        case required
        /// Plain text only.
        case never
        /// TLS before the greeting (smtps).
        case implicit
    }

    public enum AuthMechanism: String, Sendable, Equatable {
        case plain = "PLAIN"
        case login = "LOGIN"
    }

    public var host: String
    public var port: Int
    public var username: String?
    public var password: String?
    public var security: Security
    public var authMechanism: AuthMechanism?
    public var allowInsecureAuth = false

    public init(host: String, port: Int, username: String? = nil, password: String? = nil, security: Security, authMechanism: AuthMechanism? = nil) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.security = security
        self.authMechanism = authMechanism
    }

    /// Parses the URL; the error names what is wrong, never the password.
    public init(_ text: String) throws(DeliveryError) {
        func bad(_ detail: String) -> DeliveryError { DeliveryError(provider: "smtp", detail: "--smtp-url: \(detail)", permanent: true) }
        var rest = Substring(text)
        let implicit: Bool
        if rest.lowercased().hasPrefix("smtps://") {
            implicit = true
            rest = rest.dropFirst(8)
        } else if rest.lowercased().hasPrefix("smtp://") {
            implicit = false
            rest = rest.dropFirst(7)
        } else {
            throw bad("must start with smtp:// or smtps://")
        }
        var query = Substring("")
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/") else { throw bad("must not have a path") }
        var authority = rest
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
            let pieces = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let user = Self.percentDecode(pieces[0]), !user.isEmpty else { throw bad("the user name is empty or badly percent-encoded") }
            username = user
            if pieces.count == 2 {
                guard let secret = Self.percentDecode(pieces[1]) else { throw bad("the password is badly percent-encoded") }
                password = secret
            } else {
                password = ""
            }
        }
        let defaultPort = implicit ? 465 : 587
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw bad("unclosed [ in the host") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if after.isEmpty {
                port = defaultPort
            } else {
                guard after.hasPrefix(":"), let value = Int(after.dropFirst()), (1...65535).contains(value) else { throw bad("bad port") }
                port = value
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            guard let value = Int(authority[authority.index(after: colon)...]), (1...65535).contains(value) else { throw bad("bad port") }
            port = value
        } else {
            host = String(authority)
            port = defaultPort
        }
        guard !host.isEmpty, host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else { throw bad("bad host") }
        security = implicit ? .implicit : .opportunistic
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let keyValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = keyValue[0].lowercased()
            let value = keyValue.count == 2 ? keyValue[1].lowercased() : ""
            switch (key, value) {
            case ("starttls", "required"), ("starttls", "true"), ("starttls", "always"):
                guard !implicit else { throw bad("starttls makes no sense with smtps://") }
                security = .required
            case ("starttls", "never"), ("starttls", "false"):
                guard !implicit else { throw bad("starttls makes no sense with smtps://") }
                security = .never
            case ("starttls", "opportunistic"):
                guard !implicit else { throw bad("starttls makes no sense with smtps://") }
                security = .opportunistic
            case ("auth", "plain"): authMechanism = .plain
            case ("auth", "login"): authMechanism = .login
            case ("insecure_auth", "true"): allowInsecureAuth = true
            case ("insecure_auth", "false"): allowInsecureAuth = false
            default: throw bad("unknown query parameter \(key) (known: starttls=required|opportunistic|never, auth=plain|login, insecure_auth=true)")
            }
        }
    }

    /// The URL without the password, safe to log.
    public var description: String {
        let scheme = security == .implicit ? "smtps" : "smtp"
        let user = username.map { "\($0)@" } ?? ""
        let hostText = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(user)\(hostText):\(port)"
    }

    static func percentDecode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
