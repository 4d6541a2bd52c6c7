import HTTP
import ServiceKit

extension HTTPLimits {
    public init(_ configuration: Configuration) throws(ConfigurationError) {
        self.init()
        parser.maxRequestLineBytes = try configuration.int(HTTPOptions.maxRequestLineBytes, range: 64...(1 << 20))
        parser.maxHeaderBytes = try configuration.int(HTTPOptions.maxHeaderBytes, range: 256...(1 << 20))
        parser.maxHeaderCount = try configuration.int(HTTPOptions.maxHeaderCount, range: 4...10_000)
        parser.maxBodyBytes = try configuration.int(HTTPOptions.maxBodyBytes, range: 0...(64 << 20))
        maxConnections = try configuration.int(HTTPOptions.maxConnections, range: 1...1_000_000)
        maxConnectionsPerAddress = try configuration.int(HTTPOptions.maxConnectionsPerAddress, range: 1...1_000_000)
        maxPipelinedRequests = try configuration.int(HTTPOptions.maxPipelinedRequests, range: 1...10_000)
        headerTimeoutMilliseconds = Int64(try configuration.int(HTTPOptions.headerTimeoutMilliseconds, range: 100...3_600_000))
        bodyTimeoutMilliseconds = Int64(try configuration.int(HTTPOptions.bodyTimeoutMilliseconds, range: 100...3_600_000))
        idleTimeoutMilliseconds = Int64(try configuration.int(HTTPOptions.idleTimeoutMilliseconds, range: 100...86_400_000))
        writeTimeoutMilliseconds = Int64(try configuration.int(HTTPOptions.writeTimeoutMilliseconds, range: 100...3_600_000))
        requestTimeoutMilliseconds = Int64(try configuration.int(HTTPOptions.requestTimeoutMilliseconds, range: 10...3_600_000))
    }
}

extension HTTPGatewayDoor.Settings {
    public init(_ configuration: Configuration) throws(ConfigurationError) {
        self.init()
        aasaAppIDs = HTTPOptions.list(configuration, HTTPOptions.aasaAppIDs)
        for appID in aasaAppIDs {
            let parts = appID.split(separator: ".", maxSplits: 1)
            guard parts.count == 2, parts[0].count == 10, appID.utf8.allSatisfy(HTTPRequestParser.isTokenByte) else {
                throw ConfigurationError("--aasa-app-ids must be TEAMID.bundle.id values (a 10-character team id, a dot, the bundle id)")
            }
        }
        aasaPaths = HTTPOptions.list(configuration, HTTPOptions.aasaPaths)
        guard aasaPaths.allSatisfy({ $0.hasPrefix("/") && !$0.contains("\"") }) else {
            throw ConfigurationError("--aasa-paths must be paths starting with /")
        }
        trustedProxies = Set(HTTPOptions.list(configuration, HTTPOptions.trustedProxies))
    }
}
