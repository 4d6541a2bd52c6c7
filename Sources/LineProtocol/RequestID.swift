/// A request's id: one a caller vouched for, or one issued here as a process-unique prefix and
/// numbers. An issued id is spelled out only when something reads it (a log line, the access log)
/// and written into a forwarded call's `meta` digit by digit: the requests nobody logs one by one
/// (pings, forwarded or not) never build the string. Two ids are equal when they read the same.
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

    public static func == (left: RequestID, right: RequestID) -> Bool { left.description == right.description }

    /// The id as a JSON string, without building it first.
    func append(to buffer: inout [UInt8]) {
        switch source {
        case .given(let text):
            JSON.appendString(text, to: &buffer)
        case .issued(let prefix, let lane):
            buffer.append(ASCII.quote)
            JSON.appendStringContents(prefix, to: &buffer)
            if let connection = lane.connection {
                JSON.appendUnsigned(connection, to: &buffer)
                buffer.append(ASCII.dot)
            }
            JSON.appendUnsigned(lane.request, to: &buffer)
            buffer.append(ASCII.quote)
        }
    }

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
