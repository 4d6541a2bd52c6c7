import Storage

/// The reset schema, written once in SQLite's text, which existing files were migrated with and
/// never changes (a new version is appended); PostgreSQL's list is derived from it.
public enum ResetMigrations {
    public static let sqlite = [
        Migration(version: 1, name: "reset tokens and request records", sql: """
            CREATE TABLE reset_tokens (
                token_id INTEGER PRIMARY KEY,
                token_hash BLOB NOT NULL UNIQUE,
                user_id TEXT NOT NULL,
                created_at_ms INTEGER NOT NULL,
                expires_at_ms INTEGER NOT NULL,
                used_at_ms INTEGER,
                superseded_at_ms INTEGER
            );
            CREATE INDEX reset_tokens_by_user ON reset_tokens (user_id, used_at_ms, superseded_at_ms);
            CREATE TABLE reset_requests (
                subject TEXT NOT NULL,
                at_ms INTEGER NOT NULL
            );
            CREATE INDEX reset_requests_by_subject ON reset_requests (subject, at_ms);
            CREATE INDEX reset_requests_by_time ON reset_requests (at_ms);
            """),
        keyedSubjects,
        Migration(version: 3, name: "reset job queue", sql: """
            CREATE TABLE reset_jobs (
                job_id INTEGER PRIMARY KEY,
                kind TEXT NOT NULL,
                address TEXT,
                user_id TEXT,
                client TEXT,
                request_id TEXT NOT NULL,
                running INTEGER NOT NULL DEFAULT 0,
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_at_ms INTEGER NOT NULL,
                created_at_ms INTEGER NOT NULL
            );
            CREATE INDEX reset_jobs_due ON reset_jobs (running, next_attempt_at_ms);
            """),
        jobLeases,
        Migration(version: 5, name: "reset job removed factors", sql: "ALTER TABLE reset_jobs ADD COLUMN removed_factors TEXT NOT NULL DEFAULT '';"),
    ]

    /// The same migrations in PostgreSQL's types (`PostgresDDL`), so the two never drift apart.
    public static let postgres = PostgresDDL.migrations(fromSQLite: sqlite)

    // Address records were a plain SHA-256 of the address (`a:`); they are now keyed (`e:`,
    // see ResetSubject) and cannot be converted without the addresses: the per-address
    // counters restart (they span one hour); client records stay.
    private static let keyedSubjects = Migration(
        version: 2, name: "keyed address subjects", sql: "DELETE FROM reset_requests WHERE subject LIKE 'a:%';")

    /// A claimed job holds a lease: when the replica that claimed it dies, any replica takes it
    /// again once the lease has ended (`ResetJobQueue.claimDueJob`).
    private static let jobLeases =
        Migration(version: 4, name: "reset job leases", sql: "ALTER TABLE reset_jobs ADD COLUMN lease_until_ms INTEGER NOT NULL DEFAULT 0;")
}
