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
        /// Taken by a worker. A process that dies mid-send leaves this; the next start re-queues it.
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
            id: "dl_" + Base64URL.encode(SecureRandom.bytes(16)), requestID: requestID, step: step, channel: channel, trigger: trigger,
            codeSeed: SecureRandom.bytes(16), state: .queued, attempts: 0, nextAttemptAt: now, createdAt: now)
    }
}

/// The queue's operations inside one verification transaction.
public protocol DeliveryQueueTransaction {
    func enqueue(_ delivery: QueuedDelivery) throws
    /// Takes the oldest due queued message: marks it `sending` and counts the try.
    func claimDueDelivery(nowMilliseconds: Int64) throws -> QueuedDelivery?
    /// Puts a message back for another try at `at`.
    func retryDelivery(id: String, at: Int64) throws
    /// Removes a message that was sent, given up or dropped.
    func removeDelivery(id: String) throws
    /// After a restart: messages a dead process was sending go back to the queue. Returns how many.
    func requeueInterruptedDeliveries() throws -> Int
    func queuedDeliveryCount() throws -> Int
}

enum DeliveryQueueSchema {
    static let migration = Migration(version: 2, name: "delivery queue", sql: """
        CREATE TABLE deliveries (
            id TEXT PRIMARY KEY,
            request_id TEXT NOT NULL,
            step INTEGER NOT NULL,
            channel TEXT NOT NULL,
            trigger TEXT NOT NULL,
            code_seed BLOB NOT NULL,
            state TEXT NOT NULL,
            attempts INTEGER NOT NULL,
            next_attempt_at INTEGER NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE INDEX deliveries_due ON deliveries (state, next_attempt_at);
        """)
}

extension SQLiteTransaction: DeliveryQueueTransaction {
    private static let deliveryColumns = "id, request_id, step, channel, trigger, code_seed, state, attempts, next_attempt_at, created_at"

    func enqueue(_ d: QueuedDelivery) throws {
        precondition(d.codeSeed.count == 16 && d.state == .queued)
        try connection.run(
            "INSERT INTO deliveries (\(Self.deliveryColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                .text(d.id), .text(d.requestID), SQLValue(d.step), .text(d.channel.rawValue), .text(d.trigger), .blob(d.codeSeed),
                .text(d.state.rawValue), SQLValue(d.attempts), .integer(d.nextAttemptAt), .integer(d.createdAt),
            ])
    }

    func claimDueDelivery(nowMilliseconds now: Int64) throws -> QueuedDelivery? {
        guard let row = try connection.queryOne(
            "SELECT \(Self.deliveryColumns) FROM deliveries WHERE state = 'queued' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT 1",
            [.integer(now)])
        else { return nil }
        var delivery = try Self.decodeDelivery(row)
        delivery.state = .sending
        delivery.attempts += 1
        let changed = try connection.run(
            "UPDATE deliveries SET state = 'sending', attempts = ? WHERE id = ? AND state = 'queued'",
            [SQLValue(delivery.attempts), .text(delivery.id)])
        precondition(changed == 1, "a due delivery changed inside its claiming transaction")
        return delivery
    }

    func retryDelivery(id: String, at: Int64) throws {
        try connection.run("UPDATE deliveries SET state = 'queued', next_attempt_at = ? WHERE id = ?", [.integer(at), .text(id)])
    }

    func removeDelivery(id: String) throws {
        try connection.run("DELETE FROM deliveries WHERE id = ?", [.text(id)])
    }

    func requeueInterruptedDeliveries() throws -> Int {
        try connection.run("UPDATE deliveries SET state = 'queued' WHERE state = 'sending'")
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
