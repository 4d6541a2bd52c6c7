import Delivery
import Secrets
import Storage

/// One message waiting in the delivery queue (`deliveries`, in the service's own database).
/// It is written in the same transaction as the request or step it carries, and deleted once
/// sent or given up. The code is not here: it is derived from `codeSeed` under the server key,
/// so a resend after a crash carries the same code, and the database alone does not reveal it.
public struct QueuedDelivery: Sendable, Equatable {
    public enum State: String, Sendable {
        /// Waiting for a delivery worker (`nextAttemptAt` on).
        case queued
        /// Taken by a worker of `claimed_by`. A replica that dies mid-send leaves this; its next
        /// start re-queues it, or another replica once the claim is older than the lease.
        case sending
    }

    /// `dl_...`: the idempotency key the provider sees (`X-Latchkey-Delivery`), the same on every try.
    public var id: String
    public var requestID: String
    /// Index in the workflow of the step this message carries.
    public var step: Int
    public var channel: DeliveryChannel
    /// What fired the step: `start`, `next` or `timer` (the detail of its `sent` event).
    public var trigger: String
    public var codeSeed: [UInt8]
    public var state: State
    /// Tries begun so far, the one under way included.
    public var attempts: Int
    public var nextAttemptAt: Int64
    public var createdAt: Int64

    static func make(requestID: String, step: Int, channel: DeliveryChannel, trigger: String, nowMilliseconds now: Int64) -> QueuedDelivery {
        QueuedDelivery(
            id: SortableIDs.shared.next(prefix: "dl_", randomBytes: 16), requestID: requestID, step: step, channel: channel, trigger: trigger,
            codeSeed: SecureRandom.bytes(16), state: .queued, attempts: 0, nextAttemptAt: now, createdAt: now)
    }

    /// This message as a worker's claim makes it: `sending`, its first try begun.
    var claimedForFirstTry: QueuedDelivery {
        precondition(state == .queued && attempts == 0)
        var claimed = self
        claimed.state = .sending
        claimed.attempts = 1
        return claimed
    }
}

/// The queue's operations inside one verification transaction.
public protocol DeliveryQueueTransaction {
    /// Adds a message: `queued`, or already `sending` under `claimant` (a start handing its
    /// first message straight to this replica's delivery workers).
    func enqueue(_ delivery: QueuedDelivery, claimedBy claimant: String?) throws
    /// Takes the oldest due queued message for `claimant` (a replica id): marks it `sending`,
    /// notes who took it and when, and counts the try. Two replicas never take the same one.
    /// Also says whether another message was due with it (so a worker knows to call for help).
    func claimDueDelivery(nowMilliseconds: Int64, claimant: String) throws -> (delivery: QueuedDelivery, moreDue: Bool)?
    /// Puts a message back for another try at `at`.
    func retryDelivery(id: String, at: Int64) throws
    /// Removes a message that was sent, given up or dropped.
    func removeDelivery(id: String) throws
    /// After a restart: messages this replica (or a version that did not record claimants) was
    /// sending go back to the queue. Another live replica's sends are left alone. Returns how many.
    func requeueInterruptedDeliveries(claimant: String) throws -> Int
    /// Messages claimed before `claimedBefore` whose replica never finished them (it died and
    /// did not come back) go back to the queue. Returns how many.
    func requeueAbandonedDeliveries(claimedBefore: Int64, exceptClaimant: String) throws -> Int
    func queuedDeliveryCount() throws -> Int
}

extension SQLTransaction: DeliveryQueueTransaction {
    private static let deliveryColumns = "id, request_id, step, channel, trigger, code_seed, state, attempts, next_attempt_at, created_at"
    private static let insertDelivery =
        "INSERT INTO deliveries (\(deliveryColumns), claimed_by, claimed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

    func enqueue(_ d: QueuedDelivery, claimedBy claimant: String?) throws {
        precondition(d.codeSeed.count == 16 && d.state == (claimant == nil ? .queued : .sending))
        try connection.run(
            Self.insertDelivery,
            [
                .text(d.id), .text(d.requestID), SQLValue(d.step), .text(d.channel.rawValue), .text(d.trigger), .blob(d.codeSeed),
                .text(d.state.rawValue), SQLValue(d.attempts), .integer(d.nextAttemptAt), .integer(d.createdAt),
                claimant.map(SQLValue.text) ?? .null, claimant == nil ? .null : .integer(d.createdAt),
            ])
    }

    func claimDueDelivery(nowMilliseconds now: Int64, claimant: String) throws -> (delivery: QueuedDelivery, moreDue: Bool)? {
        // On PostgreSQL, replicas' workers skip a row another one is taking instead of queueing
        // behind it; the state guard below still keeps a message to one claim on either backend.
        let skipTaken = connection.dialect == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        // Two rows: the second only says whether more is due. It stays queued (on PostgreSQL,
        // locked until this claim commits: another replica skips it meanwhile, and this
        // replica's workers, told that more is due, take it).
        let rows = try connection.query(
            "SELECT \(Self.deliveryColumns) FROM deliveries WHERE state = 'queued' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT 2"
                + skipTaken,
            [.integer(now)])
        guard let row = rows.first else { return nil }
        var delivery = try Self.decodeDelivery(row)
        delivery.state = .sending
        delivery.attempts += 1
        let changed = try connection.run(
            "UPDATE deliveries SET state = 'sending', attempts = ?, claimed_by = ?, claimed_at = ? WHERE id = ? AND state = 'queued'",
            [SQLValue(delivery.attempts), .text(claimant), .integer(now), .text(delivery.id)])
        precondition(changed == 1, "a due delivery changed inside its claiming transaction")
        return (delivery, rows.count > 1)
    }

    func retryDelivery(id: String, at: Int64) throws {
        try connection.run(
            "UPDATE deliveries SET state = 'queued', next_attempt_at = ?, claimed_by = NULL, claimed_at = NULL WHERE id = ?",
            [.integer(at), .text(id)])
    }

    func removeDelivery(id: String) throws {
        try connection.run("DELETE FROM deliveries WHERE id = ?", [.text(id)])
    }

    func requeueInterruptedDeliveries(claimant: String) throws -> Int {
        try connection.run(
            "UPDATE deliveries SET state = 'queued', claimed_by = NULL, claimed_at = NULL WHERE state = 'sending' AND (claimed_by = ? OR claimed_by IS NULL)",
            [.text(claimant)])
    }

    func requeueAbandonedDeliveries(claimedBefore: Int64, exceptClaimant: String) throws -> Int {
        try connection.run(
            "UPDATE deliveries SET state = 'queued', claimed_by = NULL, claimed_at = NULL WHERE state = 'sending' AND claimed_at < ? AND claimed_by <> ?",
            [.integer(claimedBefore), .text(exceptClaimant)])
    }

    func queuedDeliveryCount() throws -> Int {
        Int(try connection.queryOne("SELECT COUNT(*) AS n FROM deliveries")?.int("n") ?? 0)
    }

    private static func decodeDelivery(_ row: Row) throws -> QueuedDelivery {
        guard let channel = DeliveryChannel(rawValue: try row.string("channel")),
            let state = QueuedDelivery.State(rawValue: try row.string("state"))
        else { throw StorageError.misuse("unreadable delivery row") }
        return QueuedDelivery(
            id: try row.string("id"), requestID: try row.string("request_id"), step: Int(try row.int("step")), channel: channel,
            trigger: try row.string("trigger"), codeSeed: try row.blob("code_seed"), state: state, attempts: Int(try row.int("attempts")),
            nextAttemptAt: try row.int("next_attempt_at"), createdAt: try row.int("created_at"))
    }
}
