import HTTP
import LineProtocol
import Runtime
import ServiceKit

/// Which provider carries each channel. Built once per process by `ProviderFactory`.
public struct ChannelProviders: Sendable {
    public var sms: DeliveryProvider
    public var voice: DeliveryProvider
    public var email: DeliveryProvider

    public init(sms: DeliveryProvider, voice: DeliveryProvider, email: DeliveryProvider) {
        self.sms = sms
        self.voice = voice
        self.email = email
    }

    /// One provider for every channel (the outbox in development, a fake in tests).
    public init(all provider: DeliveryProvider) {
        self.init(sms: provider, voice: provider, email: provider)
    }

    public func provider(for channel: DeliveryChannel) -> DeliveryProvider {
        switch channel {
        case .sms: sms
        case .voice: voice
        case .email: email
        }
    }
}

/// Stands in for a channel nothing is configured to carry: every message fails, permanently,
/// so the request records the failure instead of pretending it was sent.
public struct UnconfiguredProvider: DeliveryProvider {
    public let name: String
    public let reason: String

    public init(channel: DeliveryChannel, reason: String) {
        name = "none(\(channel.rawValue))"
        self.reason = reason
    }

    public func deliver(_ message: OutgoingMessage) throws(DeliveryError) {
        throw DeliveryError(provider: name, detail: reason, permanent: true)
    }
}

/// Builds `ChannelProviders` from `--delivery` and the provider options:
///
/// | `--delivery` | sms | voice | email |
/// |---|---|---|---|
/// | `outbox` (default) | outbox | outbox | outbox |
/// | `webhook` | webhook | webhook (text-to-speech by the receiver) | `emailProvider` or outbox |
/// | `vonage` / `twilio` | that API | webhook if `--webhook-url`, else fails visibly | `emailProvider` or outbox |
///
/// `emailProvider` is where the SMTP provider plugs in (built by the caller from `--smtp-url`).
public enum ProviderFactory {
    public static let webhookURL = ConfigOption("webhook-url", help: "where the webhook provider POSTs messages (http:// or https://)")
    public static let webhookSecret = ConfigOption("webhook-secret", help: "HMAC-SHA256 key of the X-Latchkey-Signature header, 16+ bytes")
    public static let vonageAPIKey = ConfigOption("vonage-api-key", help: "Vonage API key")
    public static let vonageAPISecret = ConfigOption("vonage-api-secret", help: "Vonage API secret")
    public static let vonageFrom = ConfigOption("vonage-from", help: "Vonage sender: a number or an alphanumeric sender id")
    public static let vonageURL = ConfigOption("vonage-url", default: VonageProvider.defaultBaseURL, help: "Vonage API base URL")
    public static let twilioAccountSID = ConfigOption("twilio-account-sid", help: "Twilio Account SID (AC...)")
    public static let twilioAuthToken = ConfigOption("twilio-auth-token", help: "Twilio Auth Token")
    public static let twilioFrom = ConfigOption("twilio-from", help: "Twilio sender: an E.164 number, or a Messaging Service SID (MG...)")
    public static let twilioURL = ConfigOption("twilio-url", default: TwilioProvider.defaultBaseURL, help: "Twilio API base URL")
    public static let httpCAFile = ConfigOption("http-ca-file", help: "PEM file of CAs trusted for provider HTTPS (default: the system store)")
    public static let httpTimeoutMilliseconds = ConfigOption("http-timeout-ms", default: "10000", help: "connect and read timeout of provider calls")
    public static let deliveryAttempts = ConfigOption(
        "delivery-attempts", default: "3", help: "tries per queued message on transient failures (the delivery queue retries, not the provider)")
    public static let deliveryBackoffMilliseconds = ConfigOption(
        "delivery-backoff-ms", default: "500", help: "wait before a queued message's second try; doubles each time, at most 60 s")

    public static let options: [ConfigOption] = [
        webhookURL, webhookSecret, vonageAPIKey, vonageAPISecret, vonageFrom, vonageURL, twilioAccountSID, twilioAuthToken,
        twilioFrom, twilioURL, httpCAFile, httpTimeoutMilliseconds, deliveryAttempts, deliveryBackoffMilliseconds,
    ]

    public static func make(configuration: Configuration, logger: Logger, emailProvider: DeliveryProvider? = nil) throws -> ChannelProviders {
        let outbox = try OutboxProvider(path: DeliveryOptions.outboxPath(configuration), logger: logger)
        let choice = configuration.string(DeliveryOptions.delivery) ?? "outbox"
        let email = emailProvider ?? outbox
        switch choice {
        case "outbox":
            return ChannelProviders(sms: outbox, voice: outbox, email: email)
        case "webhook":
            let webhook = try makeWebhook(configuration)
            return ChannelProviders(sms: webhook, voice: webhook, email: email)
        case "vonage", "twilio":
            let sms: DeliveryProvider = choice == "vonage" ? try makeVonage(configuration) : try makeTwilio(configuration)
            let voice: DeliveryProvider = configuration.isSet(webhookURL)
                ? try makeWebhook(configuration)
                : UnconfiguredProvider(channel: .voice, reason: "no voice provider: set --webhook-url for text-to-speech calls")
            return ChannelProviders(sms: sms, voice: voice, email: email)
        case "smtp":
            // E-mail by SMTP, SMS and voice still to the outbox (a development setup).
            return ChannelProviders(sms: outbox, voice: outbox, email: email)
        default:
            throw ConfigurationError("--delivery must be outbox, webhook, vonage, twilio or smtp")
        }
    }

    private static func httpClient(_ configuration: Configuration) throws -> HTTPClient {
        do {
            return try HTTPClient(
                timeoutMilliseconds: try configuration.int(httpTimeoutMilliseconds, range: 100...600_000),
                caFile: configuration.string(httpCAFile))
        } catch let error as HTTPError {
            throw ConfigurationError("HTTP client: \(error.detail)")
        }
    }

    /// One try per call: the caller's durable delivery queue owns retries and back-off, so a
    /// delivery thread never sleeps between tries and a retry survives a restart.
    private static let singleTry = RetryPolicy(maxAttempts: 1, initialBackoffMilliseconds: 0)

    private static func url(_ configuration: Configuration, _ option: ConfigOption) throws -> HTTPURL {
        do {
            return try HTTPURL(try configuration.requiredString(option))
        } catch let error as HTTPError {
            throw ConfigurationError("\(option.flag): \(error.detail)")
        }
    }

    static func makeWebhook(_ configuration: Configuration) throws -> WebhookProvider {
        let secret = Array(try configuration.requiredString(webhookSecret).utf8)
        guard secret.count >= 16 else { throw ConfigurationError("--webhook-secret must be at least 16 bytes") }
        return WebhookProvider(
            url: try url(configuration, webhookURL), secret: secret, client: try httpClient(configuration), retry: singleTry)
    }

    static func makeVonage(_ configuration: Configuration) throws -> VonageProvider {
        VonageProvider(
            apiKey: try configuration.requiredString(vonageAPIKey), apiSecret: try configuration.requiredString(vonageAPISecret),
            from: try configuration.requiredString(vonageFrom), client: try httpClient(configuration),
            baseURL: try url(configuration, vonageURL), retry: singleTry)
    }

    static func makeTwilio(_ configuration: Configuration) throws -> TwilioProvider {
        TwilioProvider(
            accountSID: try configuration.requiredString(twilioAccountSID), authToken: try configuration.requiredString(twilioAuthToken),
            from: try configuration.requiredString(twilioFrom), client: try httpClient(configuration),
            baseURL: try url(configuration, twilioURL), retry: singleTry)
    }
}
