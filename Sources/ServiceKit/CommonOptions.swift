import RPC
import Runtime

/// Options every Latchkey process understands. Their names are a contract with operators
/// (compose files, `.env`): rename one only with a deprecation.
public enum CommonOptions {
    public static let listen = ConfigOption("listen", help: "HOST:PORT this process listens on")
    public static let dataDirectory = ConfigOption("data-dir", default: "./.latchkey", help: "directory of this process's SQLite file")
    public static let replicaID = ConfigOption("replica-id", help: "short name of this replica, carried in the ids it issues (default: the service name; `auto`: the host name)")
    public static let logLevel = ConfigOption("log-level", default: "info", help: "debug, info, warning or error")
    public static let identity = ConfigOption("identity", default: "127.0.0.1:7401", help: "identity replicas, comma-separated HOST:PORT")
    public static let verification = ConfigOption("verification", default: "127.0.0.1:7402", help: "verification replicas, comma-separated HOST:PORT")
    public static let accounts = ConfigOption("accounts", default: "127.0.0.1:7403", help: "accounts replicas, comma-separated HOST:PORT")
    public static let reset = ConfigOption("reset", default: "127.0.0.1:7404", help: "reset replicas, comma-separated HOST:PORT")

    public static let databaseURL = ConfigOption(
        "database-url",
        help: "postgres://user:password@host:port/db?sslmode=... (anything libpq accepts): the service's tables in its own schema; unset: SQLite in the data directory")

    public static let eventBackend = ConfigOption(
        "event-backend", default: EventBackendKind.platformDefault.rawValue, help: "how event loops wait for sockets: epoll (Linux) or poll (portable)")

    public static let eventLoops = ConfigOption(
        "event-loops", help: "event-loop threads per process, connections spread over them round-robin (default: the number of cores)")

    public static let serviceToken = ConfigOption("service-token", help: "shared secret for internal calls: sent as meta.token, and when set a service refuses calls without it")

    public static let maxLineBytes = ConfigOption("max-line-bytes", default: "65536", help: "longest request line accepted, in bytes")
    public static let maxConnections = ConfigOption("max-connections", default: "4096", help: "open connections per process")
    public static let maxInflightPerConnection = ConfigOption("max-inflight", default: "64", help: "requests in flight per connection before reading pauses")
    public static let idleTimeoutMilliseconds = ConfigOption("idle-timeout-ms", default: "300000", help: "close a connection with nothing to do after this long")
    public static let lineTimeoutMilliseconds = ConfigOption("line-timeout-ms", default: "10000", help: "a started line must end within this long (slow clients)")
    public static let writeTimeoutMilliseconds = ConfigOption("write-timeout-ms", default: "10000", help: "a client that reads none of its answers for this long is cut off")
    public static let requestTimeoutMilliseconds = ConfigOption("request-timeout-ms", default: "10000", help: "answer `timeout` when a request takes longer")
    public static let workerThreads = ConfigOption(
        "workers", default: "16", help: "threads for database and crypto work (a request waiting for another service holds none)")
    public static let workerQueueDepth = ConfigOption("worker-queue", default: "1024", help: "requests waiting for a worker before `overloaded`")
    public static let drainTimeoutMilliseconds = ConfigOption("drain-timeout-ms", default: "10000", help: "on SIGTERM, wait this long for in-flight requests")
    public static let stopOnStdinClose = ConfigOption(
        "stop-on-stdin-close", default: "false",
        help: "drain and stop, as on SIGTERM, when standard input reaches its end: set by `latchkey up`, `latchkey bench` and the tests, which hold its other end, so a stack never outlives its launcher")

    /// Not in `all`: only identity, verification and accounts put the brand before users.
    public static let brand = ConfigOption(
        "brand", default: "Latchkey",
        help: "the name users see in codes, mails and authenticator apps, and that device keys sign into transfer confirmations: give every service the same one")

    public static let all: [ConfigOption] = [
        listen, dataDirectory, databaseURL, eventBackend, eventLoops, replicaID, logLevel, identity, verification, accounts, reset, serviceToken,
        maxLineBytes, maxConnections, maxInflightPerConnection, idleTimeoutMilliseconds,
        lineTimeoutMilliseconds, writeTimeoutMilliseconds, requestTimeoutMilliseconds,
        workerThreads, workerQueueDepth, drainTimeoutMilliseconds, stopOnStdinClose,
    ]
}

extension Configuration {
    /// `--brand`, by one rule for every service: 1-32 bytes without control characters or `=`
    /// (accounts writes it into the bytes a device key signs, as `service=<brand>`).
    public func brand() throws(ConfigurationError) -> String {
        let brand = string(CommonOptions.brand) ?? "Latchkey"
        guard (1...32).contains(brand.utf8.count), brand.unicodeScalars.allSatisfy({ $0.properties.generalCategory != .control && $0 != "=" }) else {
            throw ConfigurationError("--brand must be 1-32 bytes without control characters or '=' (device keys sign it)")
        }
        return brand
    }
}

extension ServerLimits {
    /// The limits from the command line and environment (`CommonOptions`).
    public init(_ configuration: Configuration) throws(ConfigurationError) {
        self.init()
        maxLineBytes = try configuration.int(CommonOptions.maxLineBytes, range: 256...(16 << 20))
        maxConnections = try configuration.int(CommonOptions.maxConnections, range: 1...1_000_000)
        maxInflightPerConnection = try configuration.int(CommonOptions.maxInflightPerConnection, range: 1...100_000)
        idleTimeoutMilliseconds = Int64(try configuration.int(CommonOptions.idleTimeoutMilliseconds, range: 100...86_400_000))
        lineTimeoutMilliseconds = Int64(try configuration.int(CommonOptions.lineTimeoutMilliseconds, range: 100...3_600_000))
        writeTimeoutMilliseconds = Int64(try configuration.int(CommonOptions.writeTimeoutMilliseconds, range: 100...3_600_000))
        requestTimeoutMilliseconds = Int64(try configuration.int(CommonOptions.requestTimeoutMilliseconds, range: 10...3_600_000))
    }
}
