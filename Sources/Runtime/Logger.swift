import FoundationEssentials
import LineProtocol
import Platform

/// Structured logging: one JSON object a line on stderr. Messages are constant strings;
/// data goes in dotted metadata keys. A logger is passed down and copied to add keys.
/// Never put a password, code, token or key in metadata.
public struct Logger: Sendable {
    public enum Level: Int, Sendable, Comparable {
        case debug, info, warning, error

        public init?(name: String) {
            switch name.lowercased() {
            case "debug": self = .debug
            case "info": self = .info
            case "warning", "warn": self = .warning
            case "error": self = .error
            default: return nil
            }
        }

        var name: String { ["debug", "info", "warning", "error"][rawValue] }
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    public var metadata: [String: JSON]
    public var minimumLevel: Level
    private let sink: LogSink
    /// The request this logger speaks for (`rpc.request_id`), apart from `metadata` so that
    /// deriving a request's logger copies no dictionary on the request path.
    private var requestID: RequestID?

    public init(service: String, minimumLevel: Level = .info, sink: LogSink = .standardError) {
        self.metadata = ["service": .string(service)]
        self.minimumLevel = minimumLevel
        self.sink = sink
    }

    /// A copy carrying extra keys on every line.
    public func with(_ extra: [String: JSON]) -> Logger {
        var copy = self
        copy.metadata.merge(extra) { _, new in new }
        return copy
    }

    /// A copy that writes `rpc.request_id` on every line.
    public func with(requestID: String) -> Logger { with(requestID: RequestID(requestID)) }

    public func with(requestID: RequestID) -> Logger {
        var copy = self
        copy.requestID = requestID
        return copy
    }

    // Metadata is an autoclosure: a line below the level costs no dictionary on the request path.
    public func debug(_ message: StaticString, _ extra: @autoclosure () -> [String: JSON] = [:]) { log(.debug, message, extra()) }
    public func info(_ message: StaticString, _ extra: @autoclosure () -> [String: JSON] = [:]) { log(.info, message, extra()) }
    public func warning(_ message: StaticString, _ extra: @autoclosure () -> [String: JSON] = [:]) { log(.warning, message, extra()) }
    public func error(_ message: StaticString, _ extra: @autoclosure () -> [String: JSON] = [:]) { log(.error, message, extra()) }

    public func log(_ level: Level, _ message: StaticString, _ extra: @autoclosure () -> [String: JSON] = [:]) {
        guard level >= minimumLevel else { return }
        // Merged as a list, not a dictionary: a line then copies and rehashes no metadata.
        let extra = extra()
        var fields: [(key: String, value: JSON)] = []
        fields.reserveCapacity(metadata.count + extra.count + 4)
        fields.append(contentsOf: metadata)
        if let requestID { fields.append(("rpc.request_id", .string(requestID.description))) }
        fields.append(contentsOf: extra)
        fields.append(("level", .string(level.name)))
        fields.append(("msg", .string(message.description)))
        fields.append(("ts", .string(LogTimestamp.format(unixMilliseconds: WallClock.nowMilliseconds()))))
        var line = JSON.encodedObject(merging: fields)
        line.append(UInt8(ascii: "\n"))
        sink.write(line)
    }
}

/// Where log lines go: stderr by default; tests can capture them to check no secret leaks.
public final class LogSink: @unchecked Sendable {
    private let lock = Lock()
    private let fd: Int32?
    private var captured: [[UInt8]] = []

    public static let standardError = LogSink(fd: 2)

    public init(fd: Int32) { self.fd = fd }

    /// A sink that keeps lines in memory, for tests.
    public init() { self.fd = nil }

    func write(_ line: [UInt8]) {
        lock.lock()
        defer { lock.unlock() }
        if let fd {
            line.withUnsafeBytes { bytes in _ = LibC.write(fd, bytes.baseAddress, bytes.count) }
        } else {
            captured.append(line)
        }
    }

    public var capturedText: String {
        lock.lock()
        defer { lock.unlock() }
        return captured.map { String(decoding: $0, as: UTF8.self) }.joined()
    }
}
