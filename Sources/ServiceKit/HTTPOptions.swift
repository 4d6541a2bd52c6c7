import FoundationEssentials
import Platform

/// Options of the gateway's HTTP/1.1 door. Declared once, like `CommonOptions`, so the
/// operator's table is generated from the code: pass `HTTPOptions.all` as `extraOptions`.
/// Here rather than in the gateway because reset reads `aasaPaths` too: its links must fall
/// under the universal-link paths the door publishes.
public enum HTTPOptions {
    public static let listen = ConfigOption("http-listen", default: "127.0.0.1:7480", help: "HOST:PORT of the HTTP/1.1 door; `off` disables it")
    public static let maxRequestLineBytes = ConfigOption("http-max-request-line-bytes", default: "8192", help: "longest HTTP request line (414 beyond)")
    public static let maxHeaderBytes = ConfigOption("http-max-header-bytes", default: "16384", help: "largest HTTP header section in bytes (431 beyond)")
    public static let maxHeaderCount = ConfigOption("http-max-headers", default: "64", help: "most HTTP header fields in one request (431 beyond)")
    public static let maxBodyBytes = ConfigOption("http-max-body-bytes", default: "65536", help: "largest HTTP request body in bytes (413 beyond)")
    public static let maxConnections = ConfigOption("http-max-connections", default: "4096", help: "open HTTP connections (503 and close beyond)")
    public static let maxConnectionsPerAddress = ConfigOption("http-max-connections-per-address", default: "256", help: "open HTTP connections from one client address (503 and close beyond)")
    public static let maxPipelinedRequests = ConfigOption("http-max-pipelined", default: "16", help: "pipelined HTTP requests handled at once per connection before reading pauses")
    public static let headerTimeoutMilliseconds = ConfigOption("http-header-timeout-ms", default: "10000", help: "a request head must arrive within this long of its first byte (408 and close)")
    public static let bodyTimeoutMilliseconds = ConfigOption("http-body-timeout-ms", default: "10000", help: "a request body must arrive within this long of its head (408 and close)")
    public static let idleTimeoutMilliseconds = ConfigOption("http-idle-timeout-ms", default: "60000", help: "close an idle keep-alive HTTP connection after this long")
    public static let writeTimeoutMilliseconds = ConfigOption("http-write-timeout-ms", default: "10000", help: "cut off an HTTP client that reads none of its responses for this long")
    public static let requestTimeoutMilliseconds = ConfigOption("http-request-timeout-ms", default: "15000", help: "answer 504 when a request takes longer (a backstop behind the gateway's own timeout)")
    public static let aasaAppIDs = ConfigOption("aasa-app-ids", help: "apple-app-site-association app ids, comma-separated TEAMID.bundle.id (unset: 404)")
    public static let aasaPaths = ConfigOption(
        "aasa-paths", default: "/reset*,/verify-email*,/email-change/*", help: "universal-link paths in apple-app-site-association, comma-separated")
    public static let publicURL = ConfigOption(
        "public-url",
        help: "the HTTPS origin of the gateway's HTTP door (https://bank.example.com); with it, mailed links are universal links under it (reset: <public-url><first --aasa-paths path>?token={token})")
    public static let trustedProxies = ConfigOption("trusted-proxies", help: "peer addresses whose X-Forwarded-For is believed, comma-separated (unset: none)")

    public static let all: [ConfigOption] = [
        listen, maxRequestLineBytes, maxHeaderBytes, maxHeaderCount, maxBodyBytes, maxConnections, maxConnectionsPerAddress,
        maxPipelinedRequests,
        headerTimeoutMilliseconds, bodyTimeoutMilliseconds, idleTimeoutMilliseconds, writeTimeoutMilliseconds,
        requestTimeoutMilliseconds, aasaAppIDs, aasaPaths, trustedProxies,
    ]

    /// `--public-url` without a trailing slash, or nil when unset: an https origin, no path.
    public static func publicOrigin(_ configuration: Configuration) throws(ConfigurationError) -> String? {
        guard let origin = configuration.string(publicURL), !origin.isEmpty else { return nil }
        guard origin.hasPrefix("https://"), origin.count > 8, !origin.dropFirst(8).dropLast(origin.hasSuffix("/") ? 1 : 0).contains("/") else {
            throw ConfigurationError("--public-url must be an https:// origin such as https://bank.example.com")
        }
        return origin.hasSuffix("/") ? String(origin.dropLast()) : origin
    }

    /// Where the door listens, or nil when `--http-listen off` (or empty).
    public static func endpoint(_ configuration: Configuration) throws(ConfigurationError) -> Endpoint? {
        let value = configuration.string(listen) ?? ""
        if value.isEmpty || value.lowercased() == "off" { return nil }
        return try configuration.endpoint(listen)
    }

    public static func list(_ configuration: Configuration, _ option: ConfigOption) -> [String] {
        (configuration.string(option) ?? "").split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
    }
}
