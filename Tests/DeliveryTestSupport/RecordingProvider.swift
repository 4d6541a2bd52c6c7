import Delivery
import Foundation

/// A delivery provider that keeps every message instead of sending it, and fails on demand.
public final class RecordingProvider: DeliveryProvider, @unchecked Sendable {
    public let name = "recording"
    private let lock = NSLock()
    private var messages: [OutgoingMessage] = []
    private var failing: Set<DeliveryChannel> = []

    public init() {}

    public func deliver(_ message: OutgoingMessage) throws(DeliveryError) {
        lock.lock()
        defer { lock.unlock() }
        if failing.contains(message.channel) {
            throw DeliveryError(provider: name, detail: "provider said no", permanent: true)
        }
        messages.append(message)
    }

    /// From now on, messages on `channel` fail permanently (or go out again, with `on: false`).
    public func fail(_ channel: DeliveryChannel, _ on: Bool = true) {
        lock.lock()
        if on { failing.insert(channel) } else { failing.remove(channel) }
        lock.unlock()
    }

    public var sent: [OutgoingMessage] {
        lock.lock()
        defer { lock.unlock() }
        return messages
    }

    /// The code in the last message for `requestID` (the first run of 4-10 digits).
    public func code(for requestID: String) -> String? {
        guard let message = sent.last(where: { $0.requestID == requestID }) else { return nil }
        return extractCode(message.text)
    }
}

/// The first run of 4-10 digits in a text; for voice texts ("1, 2, 3, ...") the spoken digits.
public func extractCode(_ text: String) -> String? {
    if text.contains(", ") {
        // Voice: "...: 1, 2, 3, 4, 5, 6. Again: ..."
        let pattern = try! NSRegularExpression(pattern: "(\\d(, \\d){3,9})")
        if let match = pattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
            let range = Range(match.range, in: text)
        {
            return text[range].filter(\.isNumber)
        }
    }
    let pattern = try! NSRegularExpression(pattern: "\\b(\\d{4,10})\\b")
    guard let match = pattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
        let range = Range(match.range(at: 1), in: text)
    else { return nil }
    return String(text[range])
}
