import Delivery
import LineProtocol
import Platform
import Secrets
import Storage

/// Identity's account mails, queued in its database and sent by the mail workers: a mail is
/// written before the request is answered and survives a stop; a provider that fails for a
/// while is tried again with back-off (`retryDelays`), one that refuses for good is given up.
/// Each mail is sealed (AES-256-GCM under a subkey of the identity key), recipient included:
/// a copy of the database alone shows no address and no link's token.
public final class MailQueue: Sendable {
    /// Seconds to wait after the first, second, ... failed try; a mail is given up after the last.
    static let retryDelays: [Int64] = [5, 30, 120, 600, 1800, 3600]
    /// A mail being sent is another sender's for this long (a sender that stopped gives it back).
    static let leaseSeconds: Int64 = 120

    private let database: any SQLDatabase
    private let serverKey: [UInt8]
    private let clock: IdentityClock

    init(database: any SQLDatabase, serverKey: [UInt8], clock: IdentityClock) {
        self.database = database
        self.serverKey = serverKey
        self.clock = clock
    }

    public func enqueue(_ message: OutgoingMessage) throws {
        let fields: [String: JSON] = [
            "to": .string(message.to), "subject": message.subject.map(JSON.string) ?? .null, "text": .string(message.text),
            "html": message.html.map(JSON.string) ?? .null,
        ]
        let sealed = AES256GCM.seal(JSON.object(fields).encoded(), key: sealKey, associatedData: Self.associatedData)
        let now = clock.now()
        try database.write { c in
            _ = try c.run(
                "INSERT INTO mail_queue (sealed, attempts, next_attempt_at, created_at) VALUES (?, 0, ?, ?)",
                [.blob(sealed), .integer(now), .integer(now)])
        }
    }

    /// What one try did.
    public enum Outcome: Equatable, Sendable {
        case nothingDue, sent, retryLater, givenUp
    }

    /// Takes the oldest due mail and tries it once through `deliver`.
    @discardableResult
    public func sendNext(through deliver: (OutgoingMessage) throws(DeliveryError) -> Void) throws -> Outcome {
        let now = clock.now()
        guard let (id, attempts, sealed) = try claim(now: now) else { return .nothingDue }
        guard let message = open(sealed) else {
            try remove(id)
            return .givenUp
        }
        do throws(DeliveryError) {
            try deliver(message)
        } catch {
            guard !error.permanent, attempts < Self.retryDelays.count else {
                try remove(id)
                return .givenUp
            }
            try database.write { c in
                _ = try c.run(
                    "UPDATE mail_queue SET attempts = ?, next_attempt_at = ?, lease_until = NULL WHERE mail_id = ?",
                    [.integer(attempts + 1), .integer(clock.now() + Self.retryDelays[Int(attempts)]), .integer(id)])
            }
            return .retryLater
        }
        try remove(id)
        return .sent
    }

    /// Mails not sent yet (metrics, tests).
    public func pending() throws -> Int {
        Int(try database.read { c in try c.queryOne("SELECT COUNT(*) AS n FROM mail_queue", [])?.int("n") ?? 0 })
    }

    /// Leases the oldest due mail to this sender: (id, tries so far, the sealed mail).
    /// The workers look every second: an empty queue costs one read, never a write.
    func claim(now: Int64) throws -> (Int64, Int64, [UInt8])? {
        let due = """
            SELECT mail_id, attempts, sealed FROM mail_queue
            WHERE next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?) ORDER BY mail_id LIMIT 1
            """
        guard try database.read({ c in try c.queryOne(due, [.integer(now), .integer(now)]) }) != nil else { return nil }
        return try database.write { c in
            guard let row = try c.queryOne(due, [.integer(now), .integer(now)]) else { return nil }
            let id = try row.int("mail_id")
            // The lease is taken only if nobody took it since the look: one sender per mail.
            let taken = try c.run(
                "UPDATE mail_queue SET lease_until = ? WHERE mail_id = ? AND (lease_until IS NULL OR lease_until < ?)",
                [.integer(now + Self.leaseSeconds), .integer(id), .integer(now)])
            return taken == 1 ? (id, try row.int("attempts"), try row.blob("sealed")) : nil
        }
    }

    private func remove(_ id: Int64) throws {
        try database.write { c in _ = try c.run("DELETE FROM mail_queue WHERE mail_id = ?", [.integer(id)]) }
    }

    private func open(_ sealed: [UInt8]) -> OutgoingMessage? {
        guard let bytes = try? AES256GCM.open(sealed, key: sealKey, associatedData: Self.associatedData),
            let fields = try? JSONParser.parse(bytes), let to = fields["to"]?.stringValue, let text = fields["text"]?.stringValue
        else { return nil }
        return OutgoingMessage(channel: .email, to: to, subject: fields["subject"]?.stringValue, text: text, html: fields["html"]?.stringValue)
    }

    /// Derived on use, not at start: a service at rest does no OpenSSL work (its first use keeps
    /// about 2 MB of libcrypto resident).
    private var sealKey: [UInt8] { HMACSHA256.authenticate(Array("latchkey identity mail queue v1".utf8), key: serverKey) }

    private static let associatedData = Array("identity mail".utf8)
}
