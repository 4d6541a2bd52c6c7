import HTTP
import ServiceKit

extension OperatorDoor {
    /// Binds the operator listener on `--metrics-listen` over `gateway`, on the host's loop; nil
    /// when the option is unset or `off`. Logs `metrics listening` with `metrics.listen`.
    /// Call before `ServiceHost.serve`.
    static func listen(host: ServiceHost, gateway: Gateway) throws -> HTTPServer? {
        let value = host.configuration.string(GatewayOptions.metricsListen) ?? ""
        if value.isEmpty || value.lowercased() == "off" { return nil }
        let endpoint = try host.configuration.endpoint(GatewayOptions.metricsListen)
        // A scraper and a few operators: a small share of the process's descriptors.
        var limits = HTTPLimits()
        limits.maxConnections = 64
        limits.maxConnectionsPerAddress = 16
        let server = HTTPServer(
            loop: host.loop, limits: limits, handler: OperatorDoor(gateway: gateway), logger: host.logger, replicaID: host.replicaID,
            metrics: host.metrics)
        let address = try server.listen(on: endpoint)
        host.logger.info("metrics listening", ["metrics.listen": .string(address.description)])
        return server
    }
}
