import Storage

/// The verification tables, per dialect, under the same versions: the SQLite file's steps are
/// those it always had; PostgreSQL gets the same tables in its own types (BIGINT times,
/// BYTEA hashes, BIGSERIAL ids) in the `verification` schema.
public enum VerificationSchema {
    public static let sqlite = [
        Migration(version: 1, name: "requests, events, send counters", sql: """
            CREATE TABLE requests (
                id TEXT PRIMARY KEY,
                destination TEXT NOT NULL,
                number TEXT,
                email TEXT,
                user_id TEXT,
                purpose TEXT NOT NULL,
                workflow TEXT NOT NULL,
                step INTEGER NOT NULL,
                brand TEXT NOT NULL,
                locale TEXT NOT NULL,
                code_length INTEGER NOT NULL,
                code_expiry_s INTEGER NOT NULL,
                next_event_wait_s INTEGER NOT NULL,
                code_hash BLOB NOT NULL,
                code_channel TEXT,
                payload_hash BLOB,
                payload_json TEXT,
                status TEXT NOT NULL,
                failures INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                code_expires_at INTEGER NOT NULL,
                next_event_at INTEGER,
                finished_at INTEGER,
                client TEXT
            );
            CREATE INDEX requests_destination ON requests (destination, status);
            CREATE INDEX requests_next_event ON requests (status, next_event_at);
            CREATE INDEX requests_created ON requests (created_at);
            CREATE TABLE request_events (
                id INTEGER PRIMARY KEY,
                request_id TEXT NOT NULL,
                at INTEGER NOT NULL,
                kind TEXT NOT NULL,
                channel TEXT,
                detail TEXT
            );
            CREATE INDEX request_events_request ON request_events (request_id, id);
            CREATE TABLE sends (
                id INTEGER PRIMARY KEY,
                key TEXT NOT NULL,
                at INTEGER NOT NULL
            );
            CREATE INDEX sends_key_at ON sends (key, at);
            CREATE INDEX sends_at ON sends (at);
            """),
        Migration(version: 2, name: "delivery queue", sql: """
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
            """),
        claimsMigration,
        sequencedSends,
        headsFromTheLog,
        pendingOnlyIndexes,
        keyedDeliveries,
        purposeSlots,
        keyedDestinationLimits,
    ]

    /// The same migrations in PostgreSQL's types (`PostgresDDL`), so the two never drift apart.
    public static let postgres = PostgresDDL.migrations(fromSQLite: sqlite)

    /// Who took a message and when, so a replica that starts again re-queues only its own
    /// interrupted sends, and a claim whose replica never came back is taken over once it is
    /// older than the lease. The same SQL on both dialects.
    static let claimsMigration = Migration(version: 3, name: "delivery claims", sql: """
        ALTER TABLE deliveries ADD COLUMN claimed_by TEXT;
        ALTER TABLE deliveries ADD COLUMN claimed_at BIGINT;
        """)

    /// Send limits without counting: each key numbers its sends 1, 2, 3, ... (`send_heads` held
    /// the newest number and time until version 5), so "are there `count` sends in the window"
    /// is one lookup of send number `newest - count + 1` by primary key (`SendWindows.swift`),
    /// whatever the traffic.
    /// The old `sends` rows are numbered in time order and kept. The live-code lookup finds the
    /// newest pending request of a destination in its index order, without sorting.
    static let sequencedSends =
        Migration(version: 4, name: "numbered sends", sql: """
            CREATE TABLE send_log (
                key TEXT NOT NULL,
                seq INTEGER NOT NULL,
                at INTEGER NOT NULL,
                PRIMARY KEY (key, seq)
            ) WITHOUT ROWID;
            CREATE TABLE send_heads (
                key TEXT PRIMARY KEY,
                seq INTEGER NOT NULL,
                at INTEGER NOT NULL
            ) WITHOUT ROWID;
            INSERT INTO send_log (key, seq, at)
                SELECT key, ROW_NUMBER() OVER (PARTITION BY key ORDER BY at, id), at FROM sends;
            INSERT INTO send_heads (key, seq, at) SELECT key, MAX(seq), MAX(at) FROM send_log GROUP BY key;
            DROP TABLE sends;
            CREATE INDEX send_log_at ON send_log (at);
            DROP INDEX requests_destination;
            CREATE INDEX requests_destination ON requests (destination, status, created_at);
            """)

    /// A key's newest send is read from its last row in `send_log` (one descent of the primary
    /// key), so a send writes one row instead of two: `send_heads` cost every start a page a
    /// limit key, at a random place in its tree, for a number the log already holds.
    static let headsFromTheLog = Migration(version: 5, name: "newest sends read from the log", sql: """
        DROP TABLE send_heads;
        """)

    /// The live-code lookup and the timers only ever look for pending requests, so their indexes
    /// hold only those: a finished request leaves them (one entry removed) instead of moving to
    /// another part of the tree (an entry removed and one added, often on another page), and
    /// they do not grow with history.
    static let pendingOnlyIndexes = Migration(version: 6, name: "indexes of pending requests only", sql: """
        DROP INDEX requests_destination;
        DROP INDEX requests_next_event;
        CREATE INDEX requests_live ON requests (destination, created_at) WHERE status = 'pending';
        CREATE INDEX requests_pending_events ON requests (next_event_at) WHERE status = 'pending';
        """)

    /// A message's row is written by its start and removed after its send: the table is keyed by
    /// its id (WITHOUT ROWID: one tree, where a rowid table kept a second one mapping ids to
    /// rows), and only messages waiting in the queue are indexed for it. A first message handed
    /// straight to a delivery worker is `sending` from the start and is never in that index.
    static let keyedDeliveries = Migration(version: 7, name: "deliveries keyed by id", sql: """
        CREATE TABLE deliveries_keyed (
            id TEXT PRIMARY KEY,
            request_id TEXT NOT NULL,
            step INTEGER NOT NULL,
            channel TEXT NOT NULL,
            trigger TEXT NOT NULL,
            code_seed BLOB NOT NULL,
            state TEXT NOT NULL,
            attempts INTEGER NOT NULL,
            next_attempt_at INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            claimed_by TEXT,
            claimed_at INTEGER
        ) WITHOUT ROWID;
        INSERT INTO deliveries_keyed (id, request_id, step, channel, trigger, code_seed, state, attempts, next_attempt_at, created_at,
            claimed_by, claimed_at)
            SELECT id, request_id, step, channel, trigger, code_seed, state, attempts, next_attempt_at, created_at, claimed_by, claimed_at
            FROM deliveries;
        DROP TABLE deliveries;
        ALTER TABLE deliveries_keyed RENAME TO deliveries;
        CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE state = 'queued';
        """)

    /// A number's or an address's send limit is kept under a keyed hash of it, never the
    /// number itself, so the limits outlive a deleted user without naming anyone. The windows
    /// counted under the old keys (at most a day of sends) start again once.
    static let keyedDestinationLimits = Migration(version: 9, name: "destination limits under keyed hashes", sql: """
        DELETE FROM send_log WHERE key LIKE 'number:%' OR key LIKE 'email:%' OR key LIKE 'proof:%';
        """)

    /// The one-live-code rule keys a request by its purpose too (`StoredRequest.liveKey`): the
    /// pending requests stored before keep their slot under the new key.
    static let purposeSlots = Migration(version: 8, name: "live codes per purpose", sql: """
        UPDATE requests SET destination = purpose || ' ' || destination WHERE status = 'pending';
        """)
}
