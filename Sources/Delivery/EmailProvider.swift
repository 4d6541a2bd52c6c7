import Runtime
import ServiceKit

extension DeliveryOptions {
    /// The one rule for e-mail, shared by reset and verification: through SMTP whenever
    /// `--smtp-url` is set (`--delivery` picks the SMS and voice provider, not this), else to
    /// the outbox. `--delivery smtp` without a URL is a configuration error.
    public static func emailProvider(_ configuration: Configuration, logger: Logger) throws -> DeliveryProvider {
        let hasSMTP = !(configuration.string(smtpURL) ?? "").isEmpty
        if hasSMTP { return try SMTPProvider(configuration: configuration, logger: logger) }
        if configuration.string(delivery) == "smtp" { throw ConfigurationError("--delivery smtp needs --smtp-url") }
        return try OutboxProvider(path: outboxPath(configuration), logger: logger)
    }
}
