import ServiceKit

/// Builds the gateway from configuration and serves until SIGTERM.
public enum GatewayProcess {
    public static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
        let host = try ServiceHost(name: "gateway", defaultPort: 7400, arguments: arguments, environment: environment)
        var clients: [String: RPCClient] = [:]
        for (service, option) in [
            ("identity", CommonOptions.identity), ("verification", CommonOptions.verification),
            ("accounts", CommonOptions.accounts), ("reset", CommonOptions.reset),
        ] {
            clients[service] = try host.client(for: service, option: option)
        }
        let forwarder = Forwarder(clients: clients, metrics: host.metrics, requestTimeoutMilliseconds: host.limits.requestTimeoutMilliseconds)
        let server = RPCServer(
            loop: host.loop, limits: host.limits, dispatcher: forwarder, logger: host.logger,
            replicaID: host.replicaID, trustsCallerMeta: false)
        return ServiceHost.serve(server: server, endpoint: host.listenEndpoint, host: host)
    }
}
