import HTTP
import RPC
import ServiceKit

extension HTTPGatewayDoor {
    /// Builds and binds a process's HTTP door from its configuration (`HTTPOptions`, which the
    /// process must pass as `extraOptions`): the door over `dispatcher` on `--http-listen`, on
    /// the host's loop. Returns nil when `--http-listen off`. Call before `ServiceHost.serve`.
    /// Logs `http listening` with `http.listen` (not `net.listen`, which names the line listener).
    public static func listen(
        host: ServiceHost, dispatcher: RPCDispatcher, transportFactory: HTTPServer.TransportFactory? = nil
    ) throws -> HTTPServer? {
        let configuration = host.configuration
        guard let endpoint = try HTTPOptions.endpoint(configuration) else { return nil }
        let door = HTTPGatewayDoor(dispatcher: dispatcher, settings: try Settings(configuration))
        let server = HTTPServer(
            loop: host.loop, limits: try HTTPLimits(configuration), handler: door, logger: host.logger,
            replicaID: host.replicaID, transportFactory: transportFactory, metrics: host.metrics)
        let address = try server.listen(on: endpoint)
        host.logger.info("http listening", [
            "http.listen": .string(address.description), "http.tls": .bool(transportFactory != nil),
        ])
        return server
    }
}
