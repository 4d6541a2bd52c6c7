/// A request's id: one a caller vouched for, or one issued here as a process-unique prefix and
/// numbers. An issued id is spelled out only when something reads it (a log line, a forwarded
/// call, the access log): the requests nobody logs one by one (pings) never build the string.
public struct RequestID: Sendable, Equatable, CustomStringConvertible {
    /// Where an issued id comes from: a connection's number (nil for a door with no connections
    /// of its own) and the request's number on it.
    public struct Lane: Sendable, Equatable {
        public let connection: UInt64?
        public let request: UInt64

        public init(connection: UInt64?, request: UInt64) {
            self.connection = connection
            self.request = request
        }
    }

    private enum Source: Sendable, Equatable {
        case given(String)
        case issued(prefix: String, lane: Lane)
    }

    private let source: Source

    public init(_ given: String) { source = .given(given) }

    public init(prefix: String, lane: Lane) { source = .issued(prefix: prefix, lane: lane) }

    public var description: String {
        switch source {
        case .given(let text):
            return text
        case .issued(let prefix, let lane):
            guard let connection = lane.connection else { return prefix + String(lane.request) }
            return prefix + String(connection) + "." + String(lane.request)
        }
    }
}
