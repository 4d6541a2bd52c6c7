/// The limits of the line protocol server, each named with its unit.
public struct ServerLimits: Sendable {
    public var maxLineBytes = 64 * 1024
    public var maxConnections = 4096
    /// Open connections from one peer host; set by the gateway (services trust their callers).
    public var maxConnectionsPerAddress = Int.max
    public var maxInflightPerConnection = 64
    public var maxBatchSize = 100
    public var idleTimeoutMilliseconds: Int64 = 300_000
    public var lineTimeoutMilliseconds: Int64 = 10_000
    public var writeTimeoutMilliseconds: Int64 = 10_000
    public var requestTimeoutMilliseconds: Int64 = 10_000
    public var outboundHighWaterBytes = 1 << 20

    public init() {}
}
