import Storage

/// The ledger's tables, per dialect, under the same versions. PostgreSQL gets BIGINT money and
/// times, BIGSERIAL ids and the same constraints (balances never below zero, one ledger pair
/// per transfer, one transfer per idempotency key) in the `accounts` schema.
public enum LedgerSchema {
    public static let sqlite: [Migration] = [
        Migration(version: 1, name: "accounts, transfers, ledger", sql: """
            CREATE TABLE accounts (
                id INTEGER PRIMARY KEY,
                user_id TEXT NOT NULL,
                name TEXT NOT NULL,
                currency TEXT NOT NULL,
                balance INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                UNIQUE (user_id, name),
                CHECK (balance >= 0 OR name = 'external')
            );
            CREATE TABLE transfers (
                id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('transfer', 'deposit')),
                from_account TEXT NOT NULL,
                to_account TEXT NOT NULL,
                amount INTEGER NOT NULL CHECK (amount > 0),
                currency TEXT NOT NULL,
                state TEXT NOT NULL CHECK (state IN ('pending', 'done', 'expired', 'failed', 'cancelled')),
                idempotency_key TEXT NOT NULL,
                request_id TEXT,
                created_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                completed_at INTEGER,
                UNIQUE (user_id, kind, idempotency_key)
            );
            CREATE TABLE ledger (
                id INTEGER PRIMARY KEY,
                transfer_id TEXT NOT NULL REFERENCES transfers (id),
                account_id INTEGER NOT NULL REFERENCES accounts (id),
                amount INTEGER NOT NULL CHECK (amount <> 0),
                balance_after INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                UNIQUE (transfer_id, account_id)
            );
            CREATE INDEX ledger_by_account ON ledger (account_id, id);
            CREATE INDEX transfers_by_request ON transfers (request_id);
            """),
        Migration(version: 2, name: "transfer key challenges", sql: keyChallenges),
        Migration(version: 3, name: "index by code of coded transfers only", sql: codedTransfersOnly),
        Migration(version: 4, name: "closed users", sql: closedUsers),
    ]

    /// The same migrations in PostgreSQL's types (`PostgresDDL`), so the two never drift apart.
    public static let postgres = PostgresDDL.migrations(fromSQLite: sqlite)

    /// The challenge of a transfer confirmed by a device key, and its attempts left.
    private static let keyChallenges =
        """
        CREATE TABLE transfer_key_challenges (
            transfer_id TEXT PRIMARY KEY REFERENCES transfers (id),
            device_id TEXT NOT NULL,
            challenge BLOB NOT NULL,
            attempts_left INTEGER NOT NULL
        );
        """

    /// Users whose accounts were closed when they deleted their account, by a hash of the user
    /// id: their accounts and transfers now carry `pseudonym` instead.
    private static let closedUsers =
        """
        CREATE TABLE closed_users (
            user_hash TEXT PRIMARY KEY,
            pseudonym TEXT NOT NULL,
            closed_at INTEGER NOT NULL
        );
        """

    /// Only a transfer whose code is attached is looked up by it: a reservation (and a deposit)
    /// adds no entry, and attaching a code adds one instead of moving it out of the entries
    /// without a code (two places in the tree, each a page written at commit).
    private static let codedTransfersOnly =
        """
        DROP INDEX transfers_by_request;
        CREATE INDEX transfers_by_request ON transfers (request_id) WHERE request_id IS NOT NULL;
        """
}
