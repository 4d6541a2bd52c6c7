import FoundationEssentials
import LineProtocol
import Platform
import Runtime
import ServiceKit

/// The development provider: appends every message as one JSON line to a file
/// (`{"channel","to","subject"?,"text","request_id"?,"delivery_id"?,"at"}`) that a developer or a
/// test reads.
/// Several processes may share the file: each line goes out in a single `O_APPEND` write.
public final class OutboxProvider: DeliveryProvider, @unchecked Sendable {
    public let name = "outbox"
    public let path: String
    private let logger: Logger
    private let lock = Lock()

    public init(path: String, logger: Logger) throws {
        self.path = path
        self.logger = logger
        let directory = path.deletingLastPathComponent
        if !directory.isEmpty { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
    }

    public func deliver(_ message: OutgoingMessage) throws(DeliveryError) {
        var fields: [String: JSON] = [
            "channel": .string(message.channel.rawValue), "to": .string(message.to),
            "text": .string(message.text), "at": .int(WallClock.nowSeconds()),
        ]
        if let subject = message.subject { fields["subject"] = .string(subject) }
        if let html = message.html { fields["html"] = .string(html) }
        if let requestID = message.requestID { fields["request_id"] = .string(requestID) }
        if let deliveryID = message.deliveryID { fields["delivery_id"] = .string(deliveryID) }
        var line = JSON.object(fields).encoded()
        line.append(UInt8(ascii: "\n"))
        lock.lock()
        defer { lock.unlock() }
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw DeliveryError(provider: name, detail: "cannot open outbox (errno \(errno))", permanent: false) }
        defer { close(fd) }
        let written = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == line.count else {
            throw DeliveryError(provider: name, detail: "short write to outbox (errno \(errno))", permanent: false)
        }
        // The text stays out of the log: it holds the code or the link.
        logger.info("message delivered", [
            "delivery.provider": "outbox", "delivery.channel": .string(message.channel.rawValue),
            "delivery.request_id": message.requestID.map(JSON.string) ?? .null,
        ])
    }
}

/// Options shared by every process that delivers messages. Names are part of the contract.
public enum DeliveryOptions {
    public static let delivery = ConfigOption("delivery", default: "outbox", help: "outbox, or a provider name: webhook, vonage, twilio, smtp")
    public static let outbox = ConfigOption("outbox", help: "the outbox file (default <data dir>/outbox.jsonl)")
    public static let smtpURL = ConfigOption("smtp-url", help: "smtp://user:pass@host:port or smtps://...; ?starttls=required")

    public static let all = [delivery, outbox, smtpURL]

    /// The outbox path from configuration: `--outbox`, else `<data dir>/outbox.jsonl`.
    public static func outboxPath(_ configuration: Configuration) -> String {
        if let path = configuration.string(outbox), !path.isEmpty { return path }
        let directory = configuration.string(CommonOptions.dataDirectory) ?? "./.latchkey"
        return directory.appendingPathComponent("outbox.jsonl")
    }
}
