import LineProtocol
import Runtime
import ServiceKit

/// Options of the SMTP e-mail provider. `--smtp-url` itself is in `DeliveryOptions`.
public enum SMTPOptions {
    public static let mailFrom = ConfigOption("mail-from", default: "Latchkey <no-reply@latchkey.invalid>", help: "the From of every e-mail: `Name <address>`")
    public static let caFile = ConfigOption("smtp-ca-file", help: "PEM file of CAs trusted for the SMTP server's certificate (default: the system store)")
    public static let heloName = ConfigOption("smtp-helo", default: "localhost", help: "the name given in EHLO")
    public static let timeoutMilliseconds = ConfigOption("smtp-timeout-ms", default: "30000", help: "connect and per-reply timeout")
    public static let attempts = ConfigOption("smtp-attempts", default: "3", help: "tries per message on transient (4xx, network) failures")
    public static let backoffMilliseconds = ConfigOption("smtp-backoff-ms", default: "1000", help: "wait before the second try; doubles each time")

    public static let all = [mailFrom, caFile, heloName, timeoutMilliseconds, attempts, backoffMilliseconds]
}

/// E-mail through an SMTP server: renders the message (RFC 5322, MIME text + HTML) and sends it
/// with `SMTPClient`. Shared by reset and the verification service's e-mail channel.
public final class SMTPProvider: DeliveryProvider {
    public let name = "smtp"
    public let from: MailAddress
    public let client: SMTPClient
    private let logger: Logger

    public init(client: SMTPClient, from: MailAddress, logger: Logger) {
        self.client = client
        self.from = from
        self.logger = logger
    }

    /// From `--smtp-url`, `--mail-from` and the `--smtp-*` options.
    public convenience init(configuration: Configuration, logger: Logger) throws {
        guard let text = configuration.string(DeliveryOptions.smtpURL), !text.isEmpty else {
            throw ConfigurationError("--smtp-url / LATCHKEY_SMTP_URL is required for SMTP delivery")
        }
        let url: SMTPURL
        do {
            url = try SMTPURL(text)
        } catch {
            throw ConfigurationError(error.detail)
        }
        guard let from = MailAddress(parsing: configuration.string(SMTPOptions.mailFrom) ?? "") else {
            throw ConfigurationError("--mail-from must be an address or `Name <address>`")
        }
        var settings = SMTPClient.Settings(url: url)
        settings.caFile = configuration.string(SMTPOptions.caFile)
        settings.heloName = configuration.string(SMTPOptions.heloName) ?? "localhost"
        let timeout = try configuration.int(SMTPOptions.timeoutMilliseconds, range: 100...600_000)
        settings.connectTimeoutMilliseconds = timeout
        settings.replyTimeoutMilliseconds = timeout
        settings.maxAttempts = try configuration.int(SMTPOptions.attempts, range: 1...10)
        settings.initialBackoffMilliseconds = try configuration.int(SMTPOptions.backoffMilliseconds, range: 0...60_000)
        let client: SMTPClient
        do {
            client = try SMTPClient(settings: settings)
        } catch {
            throw ConfigurationError("SMTP: \(error.detail)")
        }
        self.init(client: client, from: from, logger: logger)
        logger.info("smtp configured", ["smtp.server": .string(url.description), "smtp.security": .string(url.security.rawValue)])
    }

    /// The message as it goes on the wire (exposed for tests and previews).
    public func render(_ message: OutgoingMessage) throws(DeliveryError) -> [UInt8] {
        guard let recipient = MailAddress(parsing: message.to) else {
            throw DeliveryError(provider: name, detail: "not an e-mail address", permanent: true)
        }
        var mail = MailMessage(from: from, to: [recipient], subject: message.subject ?? "", text: message.text, html: message.html)
        mail.extraHeaders.append(("Auto-Submitted", "auto-generated"))
        if let requestID = message.requestID { mail.extraHeaders.append(("X-Latchkey-Request", requestID)) }
        return mail.rendered()
    }

    public func deliver(_ message: OutgoingMessage) throws(DeliveryError) {
        guard message.channel == .email else {
            throw DeliveryError(provider: name, detail: "SMTP delivers e-mail only, not \(message.channel.rawValue)", permanent: true)
        }
        let bytes = try render(message)
        let recipient = MailAddress(parsing: message.to)!.address
        do {
            try client.send(from: from.address, to: [recipient], message: bytes)
        } catch {
            throw DeliveryError(provider: name, detail: error.detail, permanent: error.kind == .permanent)
        }
        // Neither the text (it may hold a link or a code) nor the address goes to the log.
        logger.info("message delivered", [
            "delivery.provider": "smtp", "delivery.channel": "email",
            "delivery.request_id": message.requestID.map(JSON.string) ?? .null,
        ])
    }
}
