import LineProtocol

/// How a message reaches a person.
public enum DeliveryChannel: String, Sendable, CaseIterable {
    case sms, voice, email
}

/// One message to send. `text` may hold a one-time code or a reset link: providers deliver
/// it but never log it.
public struct OutgoingMessage: Sendable, Equatable {
    public var channel: DeliveryChannel
    /// E.164 phone number for sms/voice, an address for email.
    public var to: String
    public var subject: String?
    public var text: String
    /// Optional HTML alternative for e-mail.
    public var html: String?
    /// The verification request this message belongs to, if any.
    public var requestID: String?
    /// The idempotency key of a queued message: the same on every try, across restarts, so a
    /// receiver can drop the copy a crash mid-send makes. Nil: a fresh key per `deliver`.
    public var deliveryID: String?

    public init(
        channel: DeliveryChannel, to: String, subject: String? = nil, text: String, html: String? = nil, requestID: String? = nil,
        deliveryID: String? = nil
    ) {
        self.channel = channel
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
        self.requestID = requestID
        self.deliveryID = deliveryID
    }
}

/// Why a message could not be delivered. `permanent` failures are not retried.
public struct DeliveryError: Error, Sendable, CustomStringConvertible {
    public let provider: String
    public let detail: String
    public let permanent: Bool

    public init(provider: String, detail: String, permanent: Bool) {
        self.provider = provider
        self.detail = detail
        self.permanent = permanent
    }

    public var description: String { "\(provider): \(detail)" }
}

/// Sends messages. Blocking: call it from worker threads, never from the event loop.
public protocol DeliveryProvider: Sendable {
    var name: String { get }
    func deliver(_ message: OutgoingMessage) throws(DeliveryError)
}
