import Delivery
import FoundationEssentials
import LineProtocol
import Runtime
import Secrets

/// How the delivery queue retries a message whose provider failed transiently.
public struct DeliveryQueueSettings: Sendable, Equatable {
    /// Tries per message, the first included; a permanent failure stops at once.
    public var maxAttempts = 3
    /// Wait before the second try; doubles each time up to `maxBackoffMilliseconds`.
    public var initialBackoffMilliseconds: Int64 = 500
    public var maxBackoffMilliseconds: Int64 = 60_000
    /// A message claimed this long ago and still `sending` belongs to a replica that died and
    /// did not come back: another replica sends it again (same delivery key, same code). Longer
    /// than any provider call takes, so a slow send is never doubled.
    public var claimLeaseMilliseconds: Int64 = 120_000
    /// First messages a start may hand straight to a delivery worker (`DeliveryHandOff`),
    /// claimed in the start's own transaction; 0 sends every message through the queue. The
    /// process sets it to its delivery worker count.
    public var handOffCapacity = 0

    public init() {}

    func backoffMilliseconds(afterAttempt attempts: Int) -> Int64 {
        precondition(attempts >= 1)
        return min(maxBackoffMilliseconds, initialBackoffMilliseconds << Int64(min(attempts - 1, 20)))
    }
}

extension VerificationService {
    private enum DeliveryClaim {
        case send(QueuedDelivery, StoredRequest, moreDue: Bool)
        case dropped(moreDue: Bool)
        case nothingDue
    }

    /// Sends one message: a first message a start handed off (already claimed), else the oldest
    /// due one in the queue, which it claims; records the outcome in the request's events.
    /// Blocking (SQLite, the provider): delivery workers only.
    /// The claim and the outcome commit without waiting for the disk: a power cut that loses
    /// either only sends the message again after the restart (same code, same key), which the
    /// at-least-once guarantee already allows; the message itself was stored durably by its start.
    @discardableResult
    public func sendNextQueuedDelivery(logger: Logger) -> DeliveryPass {
        if let item = handOff.take() {
            send(item.delivery, request: item.request, logger: logger.with(["verification.request_id": .string(item.request.id)]))
            handOff.release()
            return .handled(moreDue: handOff.hasWork)
        }
        handOff.queueLookStarted()
        let now = clock.nowMilliseconds()
        let claim: DeliveryClaim
        do {
            claim = try store.write(durable: false) { [self] tx in
                guard let (delivery, moreDue) = try tx.claimDueDelivery(nowMilliseconds: now, claimant: settings.replicaID) else { return .nothingDue }
                guard let request = try tx.request(id: delivery.requestID) else {
                    try tx.removeDelivery(id: delivery.id)
                    return .dropped(moreDue: moreDue)
                }
                // A code nobody can use any more is not sent: the request ended, or the message
                // waited longer than the code lives.
                guard request.status == .pending, now < delivery.createdAt + request.codeExpirySeconds * 1000 else {
                    try tx.removeDelivery(id: delivery.id)
                    let reason = request.status == .pending ? "expired" : request.status.rawValue
                    try tx.addEvent(requestID: request.id, RequestEvent(at: now, kind: "delivery_dropped", channel: delivery.channel.rawValue, detail: reason))
                    return .dropped(moreDue: moreDue)
                }
                return .send(delivery, request, moreDue: moreDue)
            }
        } catch {
            logger.error("delivery queue failed", ["error": .string(String(describing: error))])
            return .nothingDue
        }
        switch claim {
        case .nothingDue:
            return .nothingDue
        case .dropped(let moreDue):
            metrics?.increment("delivery.dropped")
            return afterQueueClaim(moreDue: moreDue)
        case .send(let delivery, let request, let moreDue):
            send(delivery, request: request, logger: logger.with(["verification.request_id": .string(request.id)]))
            return afterQueueClaim(moreDue: moreDue)
        }
    }

    /// Another queued message was due with this one: the queue wants a look again, even if a
    /// handed-off message is what the next pass takes. A look wanted by a start that queued its
    /// message during this pass's send is not more due: that start woke the workers itself, and
    /// answering it here called a helper that, once this worker had taken the message, found the
    /// queue empty (a write transaction and two context switches).
    private func afterQueueClaim(moreDue: Bool) -> DeliveryPass {
        if moreDue { handOff.wantQueueLook() }
        return .handled(moreDue: moreDue || handOff.hasItems)
    }

    /// Something in the queue may be due (a message queued, a retry's back-off over): wakes the
    /// delivery workers, and the next pass that finds no handed-off message looks there; none
    /// ends before it has.
    public func wantDeliveryQueueLook() {
        handOff.wantQueueLook()
        deliveryWakeup.fire()
    }

    /// On start: messages this replica was sending when it was killed go back to the queue, under
    /// the same idempotency key and with the same code (at-least-once; the provider drops the copy).
    public func requeueInterruptedDeliveries(logger: Logger) throws {
        let requeued = try store.write { [self] tx in try tx.requeueInterruptedDeliveries(claimant: settings.replicaID) }
        if requeued > 0 { logger.warning("resending messages interrupted by a stop", ["delivery.requeued": .int(Int64(requeued))]) }
    }

    /// Messages another replica claimed longer ago than the lease (it died and stayed away) go
    /// back to the queue. Never this replica's own: a send of its own still running past the lease
    /// is slow, not lost (what its own stops left behind, its start re-queued).
    public func requeueAbandonedDeliveries(logger: Logger) {
        let before = clock.nowMilliseconds() - settings.delivery.claimLeaseMilliseconds
        do {
            let requeued = try store.write { [self] tx in
                try tx.requeueAbandonedDeliveries(claimedBefore: before, exceptClaimant: settings.replicaID)
            }
            if requeued > 0 { logger.warning("resending messages a lost replica was sending", ["delivery.requeued": .int(Int64(requeued))]) }
        } catch {
            logger.error("delivery queue failed", ["error": .string(String(describing: error))])
        }
    }

    /// Messages waiting in the queue (for health and metrics).
    public func queuedDeliveryCount() throws -> Int {
        try store.read { tx in try tx.queuedDeliveryCount() }
    }

    /// The code a queued message carries: a keyed function of its seed, uniform over `length`
    /// digits (rejection sampling), so every try of the message carries the same code.
    func deliveryCode(_ delivery: QueuedDelivery, length: Int) -> String {
        precondition((4...10).contains(length))
        var modulus: UInt64 = 1
        for _ in 0..<length { modulus *= 10 }
        let limit = UInt64.max - UInt64.max % modulus
        var counter: UInt8 = 0
        while true {
            let input = Array("delivery-code\u{0}\(delivery.requestID)\u{0}".utf8) + delivery.codeSeed + [counter]
            let mac = key.authenticate(input)
            for offset in stride(from: 0, to: 32, by: 8) {
                let value = mac[offset..<offset + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                if value < limit {
                    let digits = String(value % modulus)
                    return String(repeating: "0", count: length - digits.count) + digits
                }
            }
            counter &+= 1
        }
    }

    private func send(_ delivery: QueuedDelivery, request: StoredRequest, logger: Logger) {
        let code = deliveryCode(delivery, length: request.codeLength)
        let provider = providers.provider(for: delivery.channel)
        var failure: DeliveryError?
        do {
            try provider.deliver(message(delivery, request: request, code: code))
            metrics?.increment("delivery.\(delivery.channel.rawValue).sent")
        } catch {
            failure = error
            logger.warning("delivery failed", [
                "delivery.channel": .string(delivery.channel.rawValue), "delivery.provider": .string(provider.name),
                "delivery.permanent": .bool(error.permanent), "delivery.attempt": .int(Int64(delivery.attempts)),
                "error": .string(error.detail),
            ])
        }
        do {
            // The metric after the commit: a transaction's body may run twice.
            let failureMetric = try store.write(durable: false) { [self] tx -> String? in
                if let failure { return try recordFailure(tx, delivery, failure) }
                try recordSent(tx, delivery, codeHash: codeHash(requestID: delivery.requestID, code: code))
                return nil
            }
            if let failureMetric { metrics?.increment(failureMetric) }
        } catch {
            // The row stays `sending`: the next start sends it again under the same key.
            logger.error("delivery outcome not stored", ["error": .string(String(describing: error))])
        }
    }

    /// A later step's code replaces the current one only once it is out, and only if no newer
    /// step was fired meanwhile; until then the previous code stays valid.
    private func recordSent(_ tx: VerificationTransaction, _ delivery: QueuedDelivery, codeHash hash: [UInt8]) throws {
        try tx.removeDelivery(id: delivery.id)
        let at = clock.nowMilliseconds()
        guard var stored = try tx.request(id: delivery.requestID) else { return }
        if delivery.step > 0, stored.status == .pending, stored.step == delivery.step {
            stored.codeHash = hash
            stored.codeChannel = delivery.channel
            stored.codeExpiresAt = at + stored.codeExpirySeconds * 1000
            try tx.update(stored)
        }
        let detail = delivery.step == 0 ? nil : delivery.trigger
        try tx.addEvent(requestID: stored.id, RequestEvent(at: at, kind: "sent", channel: delivery.channel.rawValue, detail: detail))
    }

    /// Transient: back to the queue after the back-off. Permanent or out of tries: given up; a
    /// failed first message fails the request (nothing else carries a code yet). Returns the
    /// metric to count once the transaction has committed.
    private func recordFailure(_ tx: VerificationTransaction, _ delivery: QueuedDelivery, _ failure: DeliveryError) throws -> String {
        let at = clock.nowMilliseconds()
        let channel = delivery.channel.rawValue
        if !failure.permanent && delivery.attempts < settings.delivery.maxAttempts {
            try tx.retryDelivery(id: delivery.id, at: at + settings.delivery.backoffMilliseconds(afterAttempt: delivery.attempts))
            try tx.addEvent(requestID: delivery.requestID, RequestEvent(at: at, kind: "delivery_retry", channel: channel, detail: failure.description))
            return "delivery.\(channel).retried"
        }
        try tx.removeDelivery(id: delivery.id)
        let metric = "delivery.\(channel).failed"
        guard var stored = try tx.request(id: delivery.requestID) else { return metric }
        try tx.addEvent(requestID: stored.id, RequestEvent(at: at, kind: "delivery_failed", channel: channel, detail: failure.description))
        if delivery.step == 0, stored.status == .pending, stored.step == 0 {
            stored.status = .failed
            stored.nextEventAt = nil
            stored.finishedAt = at
            try tx.update(stored)
        }
        return metric
    }

    /// The words of one message (never logged: it holds the code).
    private func message(_ delivery: QueuedDelivery, request: StoredRequest, code: String) -> OutgoingMessage {
        let payload = request.payloadJSON.flatMap { try? JSONParser.parse(Array($0.utf8)) }?.objectValue.map(PayloadSummary.init)
        let minutes = max(1, request.codeExpirySeconds / 60)
        let (subject, text) = MessageCatalog.message(
            channel: delivery.channel, code: code, brand: request.brand, locale: request.locale, expiryMinutes: minutes, payload: payload)
        let to = delivery.channel == .email ? (request.email ?? "") : (request.number ?? "")
        return OutgoingMessage(
            channel: delivery.channel, to: to, subject: subject, text: text, requestID: request.id, deliveryID: delivery.id)
    }
}
