import FoundationEssentials
import HTTP
import LineProtocol
import Platform
import Secrets

/// A generic signed webhook: every message is POSTed as JSON to one URL, where the operator's
/// own gateway sends the SMS or places the text-to-speech call. The receiver checks
///
///     X-Latchkey-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>
///
/// with `X-Latchkey-Timestamp` (Unix seconds; reject old ones against replay) and may drop
/// duplicates by `X-Latchkey-Delivery`, the same on every retry of one message (for a queued
/// verification message, also across a restart of the sender).
/// Body: `{"id","channel","to","text","subject"?,"request_id"?,"at"}`.
public final class WebhookProvider: DeliveryProvider, @unchecked Sendable {
    public var name: String { api.provider }
    public let url: HTTPURL
    private let secret: [UInt8]
    private let api: ProviderAPI
    private let clock: @Sendable () -> Int64

    public static let signatureHeader = "X-Latchkey-Signature"
    public static let timestampHeader = "X-Latchkey-Timestamp"
    public static let deliveryHeader = "X-Latchkey-Delivery"

    public init(url: HTTPURL, secret: [UInt8], client: HTTPClient, retry: RetryPolicy = RetryPolicy(), clock: @escaping @Sendable () -> Int64 = { WallClock.nowSeconds() }) {
        precondition(secret.count >= 16, "a webhook secret needs at least 16 bytes")
        (self.url, self.secret, self.clock) = (url, secret, clock)
        api = ProviderAPI(provider: "webhook", client: client, retry: retry)
    }

    /// The signature a receiver recomputes: hex HMAC-SHA256 over `timestamp.body`.
    public static func signature(secret: [UInt8], timestamp: Int64, body: [UInt8]) -> String {
        "sha256=" + Hex.encode(HMACSHA256.authenticate(Array("\(timestamp).".utf8) + body, key: secret))
    }

    public func deliver(_ message: OutgoingMessage) throws(DeliveryError) {
        let deliveryID = message.deliveryID ?? "dl_" + Base64URL.encode(SecureRandom.bytes(12))
        let timestamp = clock()
        var fields: [String: JSON] = [
            "id": .string(deliveryID), "channel": .string(message.channel.rawValue), "to": .string(message.to),
            "text": .string(message.text), "at": .int(timestamp),
        ]
        if let subject = message.subject { fields["subject"] = .string(subject) }
        if let requestID = message.requestID { fields["request_id"] = .string(requestID) }
        let body = JSON.object(fields).encoded()
        // Each try is signed afresh so a receiver's replay window keeps working across back-off.
        try api.send {
            let now = clock()
            return HTTPClient.Request(method: "POST", url: url, headers: [
                ("Content-Type", "application/json"), ("User-Agent", "latchkey-verification"),
                (Self.timestampHeader, String(now)), (Self.signatureHeader, Self.signature(secret: secret, timestamp: now, body: body)),
                (Self.deliveryHeader, deliveryID),
            ], body: body)
        }
    }
}
