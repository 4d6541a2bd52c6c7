import Foundation
import HTTP
import LineProtocol
import Platform
import Secrets

/// Retries with exponential back-off: waits `initialBackoffMilliseconds`, then twice that, ...
/// Transient failures only (network, timeouts, 408, 429, 5xx); a permanent one stops at once.
public struct RetryPolicy: Sendable {
    public var maxAttempts: Int
    public var initialBackoffMilliseconds: Int
    public var maxBackoffMilliseconds: Int

    public init(maxAttempts: Int = 3, initialBackoffMilliseconds: Int = 500, maxBackoffMilliseconds: Int = 8000) {
        precondition(maxAttempts >= 1 && initialBackoffMilliseconds >= 0)
        self.maxAttempts = maxAttempts
        self.initialBackoffMilliseconds = initialBackoffMilliseconds
        self.maxBackoffMilliseconds = maxBackoffMilliseconds
    }

    /// Runs `attempt` until it succeeds, fails permanently, or the attempts run out.
    func run(provider: String, _ attempt: () throws(DeliveryError) -> Void) throws(DeliveryError) {
        var backoff = initialBackoffMilliseconds
        var tries = 0
        while true {
            tries += 1
            do {
                try attempt()
                return
            } catch {
                if error.permanent || tries >= maxAttempts {
                    throw DeliveryError(provider: provider, detail: "\(error.detail) (after \(tries) attempt\(tries == 1 ? "" : "s"))", permanent: error.permanent)
                }
            }
            if backoff > 0 { usleep(UInt32(min(backoff, maxBackoffMilliseconds)) * 1000) }
            backoff = min(maxBackoffMilliseconds, max(1, backoff * 2))
        }
    }

    /// Whether an HTTP status is worth another try.
    static func isTransient(status: Int) -> Bool { status == 408 || status == 429 || status >= 500 }
}

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
    public let name = "webhook"
    public let url: HTTPURL
    private let secret: [UInt8]
    private let client: HTTPClient
    private let retry: RetryPolicy
    private let clock: @Sendable () -> Int64

    public static let signatureHeader = "X-Latchkey-Signature"
    public static let timestampHeader = "X-Latchkey-Timestamp"
    public static let deliveryHeader = "X-Latchkey-Delivery"

    public init(url: HTTPURL, secret: [UInt8], client: HTTPClient, retry: RetryPolicy = RetryPolicy(), clock: @escaping @Sendable () -> Int64 = { WallClock.nowSeconds() }) {
        precondition(secret.count >= 16, "a webhook secret needs at least 16 bytes")
        self.url = url
        self.secret = secret
        self.client = client
        self.retry = retry
        self.clock = clock
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
        try retry.run(provider: name) { () throws(DeliveryError) in
            // Each try is signed afresh so a receiver's replay window keeps working across back-off.
            let now = clock()
            let request = HTTPClient.Request(method: "POST", url: url, headers: [
                ("Content-Type", "application/json"), ("User-Agent", "latchkey-verification"),
                (Self.timestampHeader, String(now)), (Self.signatureHeader, Self.signature(secret: secret, timestamp: now, body: body)),
                (Self.deliveryHeader, deliveryID),
            ], body: body)
            let response: HTTPClient.Response
            do {
                response = try client.send(request)
            } catch {
                throw DeliveryError(provider: name, detail: String(describing: error), permanent: false)
            }
            guard response.isSuccess else {
                throw DeliveryError(provider: name, detail: "HTTP \(response.status)", permanent: !RetryPolicy.isTransient(status: response.status))
            }
        }
    }
}
