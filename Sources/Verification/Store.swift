import Delivery
import LineProtocol
import Storage

/// One verification request as stored. Times are Unix milliseconds on the service's clock.
/// The code is never here: only `codeHash`, an HMAC under the server key bound to the id.
public struct StoredRequest: Sendable, Equatable {
    public enum Status: String, Sendable {
        case pending, verified, failed, cancelled, expired
    }

    public var id: String
    public var number: String?
    public var email: String?
    public var userID: String?
    public var purpose: Purpose
    public var workflow: Workflow
    /// Index in `workflow.steps` of the last step fired (sent or tried).
    public var step: Int
    public var brand: String
    public var locale: MessageLocale
    public var codeLength: Int
    public var codeExpirySeconds: Int64
    public var nextEventWaitSeconds: Int64
    public var codeHash: [UInt8]
    /// The channel that carried the code now valid (the factor a login check names).
    public var codeChannel: DeliveryChannel?
    public var payloadHash: [UInt8]?
    /// Canonical JSON of the payload, to word later messages of the workflow.
    public var payloadJSON: String?
    public var status: Status
    public var failures: Int
    public var createdAt: Int64
    public var codeExpiresAt: Int64
    public var nextEventAt: Int64?
    public var finishedAt: Int64?
    public var client: String?

    public var hasNextStep: Bool { step + 1 < workflow.steps.count }

    /// The one-live-code rule's key: the purpose, the user and the destination (number, else
    /// e-mail address). Another user's request to the same number neither blocks this one nor is
    /// ever named to it, and a request of another purpose neither: a session that owes its login
    /// code never blocks the owner's transfer code, nor learns of it.
    public var liveKey: String {
        let destination = number ?? email ?? id
        return "\(purpose.rawValue) " + (userID.map { "user:\($0) \(destination)" } ?? destination)
    }

    /// Still able to be verified: pending, and either the code is valid or another step will come.
    public func isLive(nowMilliseconds now: Int64) -> Bool {
        status == .pending && (codeExpiresAt > now || nextEventAt != nil)
    }
}

/// One thing that happened to a request: started, sent, delivery_failed, check_failed, verified, ...
public struct RequestEvent: Sendable, Equatable {
    public var at: Int64
    public var kind: String
    public var channel: String?
    public var detail: String?

    public init(at: Int64, kind: String, channel: String? = nil, detail: String? = nil) {
        self.at = at
        self.kind = kind
        self.channel = channel
        self.detail = detail
    }
}

/// The operations verification performs inside one transaction. SQL stays in the store.
public protocol VerificationTransaction: DeliveryQueueTransaction {
    func request(id: String) throws -> StoredRequest?
    /// The live request under this key (`StoredRequest.liveKey`), if any.
    func liveRequest(destination: String, nowMilliseconds: Int64) throws -> StoredRequest?
    func insert(_ request: StoredRequest) throws
    func update(_ request: StoredRequest) throws
    func addEvent(requestID: String, _ event: RequestEvent) throws
    func events(requestID: String) throws -> [RequestEvent]
    /// The newest send recorded under `key` (sends are numbered 1, 2, 3, ... per key), if any.
    func latestSend(key: String) throws -> SendMark?
    /// The time of send number `sequence` under `key`; nil once pruned.
    func sendTime(key: String, sequence: Int64) throws -> Int64?
    /// Records one more send under `key` at `at` (or at the newest send's time, if later),
    /// numbered after `newest`: `latestSend(key:)` read earlier in this transaction.
    func recordSend(key: String, after newest: SendMark?, at: Int64) throws
    func dueRequestIDs(nowMilliseconds: Int64, limit: Int) throws -> [String]
    func expiredPendingIDs(nowMilliseconds: Int64, limit: Int) throws -> [String]
    func prune(before: Int64) throws
    /// A deleted user's requests (and those to the user's number or address that name no
    /// user), their events and queued sends, and the user's own send limit.
    func eraseUser(userID: String, number: String?, email: String?) throws -> Int
    /// The user's requests for the user's data export, newest first, each with its events;
    /// never a code or a hash. Times in Unix seconds, as everywhere in the export.
    func requestsForExport(userID: String, limit: Int) throws -> [JSON]
}

/// Where requests live. `write` bodies run in one serialized transaction and roll back on throw.
/// `durable` false: the commit may skip the wait for the disk (`Database.write(durable:)`), for
/// writes whose loss in a power cut only repeats work.
public protocol VerificationStore: Sendable {
    func write<T>(durable: Bool, _ body: @escaping (VerificationTransaction) throws -> T) throws -> T
    func read<T>(_ body: (VerificationTransaction) throws -> T) throws -> T
}

extension VerificationStore {
    public func write<T>(_ body: @escaping (VerificationTransaction) throws -> T) throws -> T { try write(durable: true, body) }
}

/// Requests in a SQL database: the embedded SQLite file (the default), or the `verification`
/// schema on PostgreSQL shared by every replica. One set of statements serves both; only the
/// migrations are written per dialect. Every rule that reads then writes (the one live code,
/// the send limits, claiming a step or a message) runs inside one `write`, which SQLite
/// serializes and PostgreSQL runs SERIALIZABLE (retried on conflict), so it holds across replicas.
public final class SQLVerificationStore: VerificationStore, @unchecked Sendable {
    public let database: any SQLDatabase
    /// SQLite: concurrent writes (starts, checks, delivery claims) share one transaction and one
    /// fsync (one that throws is undone alone), each answered only once committed. One transaction a
    /// write on PostgreSQL, whose server already groups concurrent commits.
    private let writer: any SQLWriter

    public init(database: any SQLDatabase, groupCommitMax: Int = 64) {
        self.database = database
        writer = makeSQLWriter(for: database, groupCommitMax: groupCommitMax)
    }

    /// The embedded default: the SQLite file at `path`, created and migrated.
    public convenience init(path: String, options: DatabaseOptions = DatabaseOptions(synchronous: .full)) throws {
        self.init(database: try Database(path: path, options: options, migrations: VerificationSchema.sqlite))
    }

    /// PostgreSQL commits every write durably (the server groups concurrent commits itself).
    public func write<T>(durable: Bool, _ body: @escaping (VerificationTransaction) throws -> T) throws -> T {
        try writer.write(durable: durable) { connection in try body(SQLTransaction(connection: connection)) }
    }

    /// (transactions, writes) committed so far.
    public var groupCommitStatistics: (batches: Int, jobs: Int) { writer.statistics }

    /// Writes waiting for the running batch to commit.
    public var groupCommitQueued: Int { writer.queuedJobs }

    public func read<T>(_ body: (VerificationTransaction) throws -> T) throws -> T {
        try database.read { connection in try body(SQLTransaction(connection: connection)) }
    }
}

struct SQLTransaction: VerificationTransaction {
    let connection: Connection

    private static let columns = """
        id, number, email, user_id, purpose, workflow, step, brand, locale, code_length, code_expiry_s,
        next_event_wait_s, code_hash, code_channel, payload_hash, payload_json, status, failures, created_at,
        code_expires_at, next_event_at, finished_at, client
        """

    // Built once: an SQL text made for each call costs its building and a lookup by contents.
    private static let requestByID = "SELECT \(columns) FROM requests WHERE id = ?"
    private static let liveRequestOfDestination = """
        SELECT \(columns) FROM requests WHERE destination = ? AND status = 'pending'
        AND (code_expires_at > ? OR next_event_at IS NOT NULL) ORDER BY created_at DESC LIMIT 1
        """
    private static let insertRequest = """
        INSERT INTO requests (destination, \(columns))
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    func request(id: String) throws -> StoredRequest? {
        try connection.queryOne(Self.requestByID, [.text(id)]).map(Self.decode)
    }

    func liveRequest(destination: String, nowMilliseconds now: Int64) throws -> StoredRequest? {
        try connection.queryOne(Self.liveRequestOfDestination, [.text(destination), .integer(now)]).map(Self.decode)
    }

    func insert(_ r: StoredRequest) throws {
        try connection.run(Self.insertRequest, [.text(r.liveKey)] + Self.values(r))
    }

    func update(_ r: StoredRequest) throws {
        let changed = try connection.run(
            """
            UPDATE requests SET step = ?, code_hash = ?, code_channel = ?, status = ?, failures = ?,
            code_expires_at = ?, next_event_at = ?, finished_at = ? WHERE id = ?
            """,
            [
                SQLValue(r.step), .blob(r.codeHash), SQLValue(r.codeChannel?.rawValue), .text(r.status.rawValue),
                SQLValue(r.failures), .integer(r.codeExpiresAt), SQLValue(r.nextEventAt), SQLValue(r.finishedAt), .text(r.id),
            ])
        precondition(changed == 1, "update of a request that is not stored")
    }

    func addEvent(requestID: String, _ event: RequestEvent) throws {
        try connection.run(
            "INSERT INTO request_events (request_id, at, kind, channel, detail) VALUES (?, ?, ?, ?, ?)",
            [.text(requestID), .integer(event.at), .text(event.kind), SQLValue(event.channel), SQLValue(event.detail)])
    }

    func events(requestID: String) throws -> [RequestEvent] {
        try connection.query(
            "SELECT at, kind, channel, detail FROM request_events WHERE request_id = ? ORDER BY id LIMIT 100", [.text(requestID)]
        ).map { row in
            RequestEvent(
                at: try row.int("at"), kind: try row.string("kind"), channel: try row.optionalString("channel"),
                detail: try row.optionalString("detail"))
        }
    }

    /// The key's last row in its primary key's order: one descent of the index, however many sends it has.
    func latestSend(key: String) throws -> SendMark? {
        try connection.queryOne("SELECT seq, at FROM send_log WHERE key = ? ORDER BY seq DESC LIMIT 1", [.text(key)]).map { row in
            SendMark(sequence: try row.int("seq"), at: try row.int("at"))
        }
    }

    func sendTime(key: String, sequence: Int64) throws -> Int64? {
        try connection.queryOne("SELECT at FROM send_log WHERE key = ? AND seq = ?", [.text(key), .integer(sequence)])?.int("at")
    }

    func recordSend(key: String, after newest: SendMark?, at: Int64) throws {
        let mark = SendMark.following(newest, at: at)
        // Two replicas that read the same newest number both insert the next: SQLite runs one
        // writer at a time; PostgreSQL reports the second as a serialization failure (retried),
        // since it read the place its insert goes to (SERIALIZABLE checks that before it would
        // report a unique violation).
        try connection.run("INSERT INTO send_log (key, seq, at) VALUES (?, ?, ?)", [.text(key), .integer(mark.sequence), .integer(mark.at)])
    }

    func dueRequestIDs(nowMilliseconds now: Int64, limit: Int) throws -> [String] {
        try connection.query(
            "SELECT id FROM requests WHERE status = 'pending' AND next_event_at IS NOT NULL AND next_event_at <= ? ORDER BY next_event_at LIMIT ?",
            [.integer(now), SQLValue(limit)]
        ).map { try $0.string("id") }
    }

    func expiredPendingIDs(nowMilliseconds now: Int64, limit: Int) throws -> [String] {
        try connection.query(
            "SELECT id FROM requests WHERE status = 'pending' AND next_event_at IS NULL AND code_expires_at <= ? LIMIT ?",
            [.integer(now), SQLValue(limit)]
        ).map { try $0.string("id") }
    }

    func prune(before: Int64) throws {
        try connection.run("DELETE FROM send_log WHERE at <= ?", [.integer(before)])
        try connection.run(
            "DELETE FROM request_events WHERE request_id IN (SELECT id FROM requests WHERE status <> 'pending' AND created_at <= ?)",
            [.integer(before)])
        try connection.run("DELETE FROM requests WHERE status <> 'pending' AND created_at <= ?", [.integer(before)])
    }

    func requestsForExport(userID: String, limit: Int) throws -> [JSON] {
        try connection.query("""
            SELECT id, number, email, purpose, workflow, status, code_channel, failures, created_at, finished_at FROM requests
            WHERE user_id = ? ORDER BY created_at DESC LIMIT ?
            """, [.text(userID), SQLValue(limit)]
        ).map { row -> JSON in
            let id = try row.string("id")
            let events = try self.events(requestID: id).map { event -> JSON in
                [
                    "at": .int(event.at / 1000), "kind": .string(event.kind), "channel": event.channel.map(JSON.string) ?? .null,
                    "detail": event.detail.map(JSON.string) ?? .null,
                ]
            }
            return [
                "request_id": .string(id), "number": try row.optionalString("number").map(JSON.string) ?? .null,
                "email": try row.optionalString("email").map(JSON.string) ?? .null, "purpose": .string(try row.string("purpose")),
                "workflow": .string(try row.string("workflow")), "status": .string(try row.string("status")),
                "channel": try row.optionalString("code_channel").map(JSON.string) ?? .null, "failures": .int(try row.int("failures")),
                "created_at": .int(try row.int("created_at") / 1000),
                "finished_at": try row.optionalInt("finished_at").map { .int($0 / 1000) } ?? .null,
                "events": .array(events),
            ]
        }
    }

    func eraseUser(userID: String, number: String?, email: String?) throws -> Int {
        let mine = "SELECT id FROM requests WHERE user_id = ? OR (user_id IS NULL AND (number = ? OR email = ?))"
        let values: [SQLValue] = [.text(userID), SQLValue(number), SQLValue(email)]
        try connection.run("DELETE FROM deliveries WHERE request_id IN (\(mine))", values)
        try connection.run("DELETE FROM request_events WHERE request_id IN (\(mine))", values)
        let erased = try connection.run("DELETE FROM requests WHERE id IN (\(mine))", values)
        try connection.run("DELETE FROM send_log WHERE key = ?", [.text("user:\(userID)")])
        return erased
    }

    private static func values(_ r: StoredRequest) -> [SQLValue] {
        [
            .text(r.id), SQLValue(r.number), SQLValue(r.email), SQLValue(r.userID), .text(r.purpose.rawValue),
            .text(r.workflow.rawValue), SQLValue(r.step), .text(r.brand), .text(r.locale.rawValue), SQLValue(r.codeLength),
            .integer(r.codeExpirySeconds), .integer(r.nextEventWaitSeconds), .blob(r.codeHash), SQLValue(r.codeChannel?.rawValue),
            SQLValue(r.payloadHash), SQLValue(r.payloadJSON), .text(r.status.rawValue), SQLValue(r.failures), .integer(r.createdAt),
            .integer(r.codeExpiresAt), SQLValue(r.nextEventAt), SQLValue(r.finishedAt), SQLValue(r.client),
        ]
    }

    private static func decode(_ row: Row) throws -> StoredRequest {
        guard let purpose = Purpose(rawValue: try row.string("purpose")),
            let workflow = Workflow(rawValue: try row.string("workflow")),
            let locale = MessageLocale(rawValue: try row.string("locale")),
            let status = StoredRequest.Status(rawValue: try row.string("status"))
        else { throw StorageError.misuse("unreadable verification request row") }
        return StoredRequest(
            id: try row.string("id"), number: try row.optionalString("number"), email: try row.optionalString("email"),
            userID: try row.optionalString("user_id"), purpose: purpose, workflow: workflow, step: Int(try row.int("step")),
            brand: try row.string("brand"), locale: locale, codeLength: Int(try row.int("code_length")),
            codeExpirySeconds: try row.int("code_expiry_s"), nextEventWaitSeconds: try row.int("next_event_wait_s"),
            codeHash: try row.blob("code_hash"), codeChannel: try row.optionalString("code_channel").flatMap(DeliveryChannel.init(rawValue:)),
            payloadHash: try row.optionalBlob("payload_hash"), payloadJSON: try row.optionalString("payload_json"),
            status: status, failures: Int(try row.int("failures")), createdAt: try row.int("created_at"),
            codeExpiresAt: try row.int("code_expires_at"), nextEventAt: try row.optionalInt("next_event_at"),
            finishedAt: try row.optionalInt("finished_at"), client: try row.optionalString("client"))
    }
}
