import LineProtocol
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

/// Builds `ChannelProviders` from `--delivery` and the provider options.
public enum ProviderFactory {
    public static let options: [ConfigOption] = []

    public static func make(configuration: Configuration, logger: Logger) throws -> ChannelProviders {
        let outbox = try OutboxProvider(path: DeliveryOptions.outboxPath(configuration), logger: logger)
        return ChannelProviders(all: outbox)
    }
}
