import FoundationEssentials
import Platform
import RPC
import Runtime
import ServiceKit
import TLS

/// The gateway's own options (beyond `CommonOptions`), documented in protocol/gateway.md.
public enum GatewayOptions {
    public static let sessionCacheMilliseconds = ConfigOption("session-cache-ms", default: "2000", help: "reuse an introspection answer this long (0: off)")
    public static let upstreamTimeoutMilliseconds = ConfigOption("upstream-timeout-ms", default: "5000", help: "longest wait for one forwarded call")
    public static let healthIntervalMilliseconds = ConfigOption("health-interval-ms", default: "1000", help: "probe every replica's <service>.health this often")
    public static let resolveIntervalMilliseconds = ConfigOption("resolve-interval-ms", default: "5000", help: "re-resolve replica DNS names this often")
    public static let connectionsPerReplica = ConfigOption("connections-per-replica", default: "2", help: "multiplexed connections to each replica, per event loop")
    public static let maxConnectionsPerAddress = ConfigOption("max-connections-per-address", default: "256", help: "open connections from one client address")
    public static let rateLimits = ConfigOption("rate-limits", help: "per-address token buckets, group=rate_per_s:burst,... (groups: ping observe auth codes reset default; rate 0 = unlimited)")
    public static let tlsCertificate = ConfigOption("tls-cert", help: "PEM certificate chain: serve TLS 1.2+ on the listener")
    public static let tlsKey = ConfigOption("tls-key", help: "PEM private key for --tls-cert")
    public static let metricsListen = ConfigOption(
        "metrics-listen",
        help: "HOST:PORT of the operator's HTTP listener: GET /metrics (Prometheus) and GET /healthz (every replica); unset or `off`: none. Keep it off public networks")
    public static let logSummaryIntervalMilliseconds = ConfigOption(
        "log-summary-interval-ms", default: "10000", help: "write one line of counts of pings, refusals and rate-limited requests this often, instead of a line each")

    public static let all: [ConfigOption] = [
        sessionCacheMilliseconds, upstreamTimeoutMilliseconds, healthIntervalMilliseconds, resolveIntervalMilliseconds,
        connectionsPerReplica, maxConnectionsPerAddress, rateLimits, tlsCertificate, tlsKey, logSummaryIntervalMilliseconds, metricsListen,
    ]

    public static func settings(_ configuration: Configuration) throws -> GatewaySettings {
        var settings = GatewaySettings()
        settings.sessionCacheMilliseconds = Int64(try configuration.int(sessionCacheMilliseconds, range: 0...60_000))
        settings.upstreamTimeoutMilliseconds = Int64(try configuration.int(upstreamTimeoutMilliseconds, range: 10...600_000))
        settings.healthIntervalMilliseconds = Int64(try configuration.int(healthIntervalMilliseconds, range: 50...600_000))
        settings.healthTimeoutMilliseconds = min(settings.healthIntervalMilliseconds, 1000)
        settings.resolveIntervalMilliseconds = Int64(try configuration.int(resolveIntervalMilliseconds, range: 100...3_600_000))
        settings.connectionsPerReplica = try configuration.int(connectionsPerReplica, range: 1...64)
        settings.serviceToken = configuration.string(CommonOptions.serviceToken)
        if let text = configuration.string(rateLimits) {
            guard let limits = RateLimits.parse(text) else {
                throw ConfigurationError("--rate-limits must be group=rate:burst,... with groups ping, observe, auth, codes, reset, default")
            }
            settings.rateLimits = limits
        }
        return settings
    }
}

/// Builds the gateway from configuration and serves until SIGTERM: the line listener and the
/// HTTP/1.1 door (protocol/http.md), both over the same `Gateway` dispatcher and the same TLS
/// context, and the operator listener (`OperatorDoor`) when `--metrics-listen` is set.
public enum GatewayProcess {
    public static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
        let host = try ServiceHost(
            name: "gateway", defaultPort: 7400, arguments: arguments, environment: environment,
            extraOptions: GatewayOptions.all + HTTPOptions.all, keepsData: false)
        let configuration = host.configuration
        let settings = try GatewayOptions.settings(configuration)
        var endpoints: [String: [Endpoint]] = [:]
        for (service, option) in [
            ("identity", CommonOptions.identity), ("verification", CommonOptions.verification),
            ("accounts", CommonOptions.accounts), ("reset", CommonOptions.reset),
        ] {
            endpoints[service] = try configuration.endpoints(option)
        }
        let accessLog = AccessLog(
            replicaID: host.replicaID,
            summaryIntervalMilliseconds: Int64(try configuration.int(GatewayOptions.logSummaryIntervalMilliseconds, range: 100...3_600_000)))
        let gateway = Gateway.make(
            group: host.loopGroup, endpoints: endpoints, settings: settings, metrics: host.metrics, logger: host.logger, accessLog: accessLog)
        var limits = host.limits
        limits.maxConnectionsPerAddress = try configuration.int(GatewayOptions.maxConnectionsPerAddress, range: 1...1_000_000)
        let server = RPCServer(
            group: host.loopGroup, limits: limits, dispatcher: gateway, logger: host.logger,
            replicaID: host.replicaID, trustsCallerMeta: false, metrics: host.metrics)
        let transportFactory = try tlsTransportFactory(configuration, logger: host.logger)
        server.makeTransport = transportFactory
        if let http = try HTTPGatewayDoor.listen(host: host, dispatcher: gateway, transportFactory: transportFactory) {
            host.addListener(drain: { http.drain(completion: $0) }, forceClose: { http.forceClose() })
        }
        if let operatorListener = try OperatorDoor.listen(host: host, gateway: gateway) {
            host.addListener(drain: { operatorListener.drain(completion: $0) }, forceClose: { operatorListener.forceClose() })
        }
        let status = ServiceHost.serve(server: server, endpoint: host.listenEndpoint, host: host)
        accessLog.flush(final: true)
        return status
    }

    /// TLS 1.2+ for both doors when `--tls-cert` and `--tls-key` are given; nil for plain TCP.
    static func tlsTransportFactory(_ configuration: Configuration, logger: Logger) throws -> (@Sendable (Socket) throws -> Transport)? {
        switch (configuration.string(GatewayOptions.tlsCertificate), configuration.string(GatewayOptions.tlsKey)) {
        case (let certificate?, let key?):
            let context = try TLSServerContext(certificateChainFile: certificate, privateKeyFile: key)
            logger.info("tls enabled", ["tls.certificate": .string(certificate)])
            return { socket in try context.makeTransport(for: socket) }
        case (nil, nil):
            return nil
        default:
            throw ConfigurationError("--tls-cert and --tls-key go together")
        }
    }
}
