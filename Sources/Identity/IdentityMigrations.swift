import Storage

/// The identity schema, written once in SQLite's text, which existing files were migrated with and
/// never changes (a new version is appended); PostgreSQL's list is derived from it.
public enum IdentityMigrations {
    public static let sqlite = [
        Migration(version: 1, name: "identity", sql: """
            CREATE TABLE users (
                user_id TEXT PRIMARY KEY,
                username TEXT NOT NULL UNIQUE,
                email TEXT NOT NULL UNIQUE,
                phone TEXT NOT NULL,
                password_hash TEXT NOT NULL,
                sms_verification INTEGER NOT NULL DEFAULT 0,
                sitekey BLOB,
                created_at INTEGER NOT NULL
            );
            CREATE TABLE sessions (
                session_id TEXT PRIMARY KEY,
                token_hash BLOB NOT NULL UNIQUE,
                user_id TEXT NOT NULL REFERENCES users(user_id),
                device_id TEXT NOT NULL,
                aal INTEGER NOT NULL,
                aal2_at INTEGER,
                created_at INTEGER NOT NULL,
                last_seen_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                revoked_at INTEGER
            );
            CREATE INDEX sessions_by_user ON sessions (user_id, revoked_at);
            CREATE TABLE devices (
                user_id TEXT NOT NULL REFERENCES users(user_id),
                device_id TEXT NOT NULL,
                first_seen_at INTEGER NOT NULL,
                trusted_at INTEGER,
                PRIMARY KEY (user_id, device_id)
            );
            CREATE TABLE device_keys (
                key_id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users(user_id),
                device_id TEXT NOT NULL,
                public_key BLOB NOT NULL,
                protection TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                last_used_at INTEGER,
                revoked_at INTEGER
            );
            CREATE INDEX device_keys_by_user ON device_keys (user_id, device_id, revoked_at);
            CREATE TABLE challenges (
                challenge_hash BLOB PRIMARY KEY,
                user_id TEXT NOT NULL,
                device_id TEXT NOT NULL,
                expires_at INTEGER NOT NULL,
                used_at INTEGER
            );
            CREATE TABLE login_throttle (
                username TEXT PRIMARY KEY,
                failures INTEGER NOT NULL,
                last_failure_at INTEGER NOT NULL,
                locked_until INTEGER NOT NULL
            );
            CREATE TABLE audit_events (
                event_id INTEGER PRIMARY KEY,
                user_id TEXT NOT NULL,
                event TEXT NOT NULL,
                outcome TEXT NOT NULL,
                device_id TEXT,
                client TEXT,
                at INTEGER NOT NULL
            );
            CREATE INDEX audit_events_by_user ON audit_events (user_id, event_id);
            CREATE INDEX login_throttle_by_age ON login_throttle (last_failure_at);
            CREATE INDEX challenges_by_expiry ON challenges (expires_at);
            """),
        Migration(version: 2, name: "phone proofs", sql: """
            CREATE TABLE phone_proofs (
                user_id TEXT PRIMARY KEY REFERENCES users(user_id),
                phone TEXT NOT NULL,
                proven_at INTEGER NOT NULL
            );
            -- Users who already passed a code on a trusted device got it on this phone: proven.
            INSERT INTO phone_proofs (user_id, phone, proven_at)
                SELECT u.user_id, u.phone, MIN(d.trusted_at) FROM users u JOIN devices d ON d.user_id = u.user_id
                WHERE d.trusted_at IS NOT NULL GROUP BY u.user_id, u.phone;
            """),
        Migration(version: 3, name: "login_budgets", sql: """
            ALTER TABLE login_throttle ADD COLUMN consecutive INTEGER NOT NULL DEFAULT 0;
            UPDATE login_throttle SET consecutive = failures;
            CREATE TABLE device_tokens (
                token_hash BLOB PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users(user_id),
                device_id TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                failures INTEGER NOT NULL DEFAULT 0,
                consecutive INTEGER NOT NULL DEFAULT 0,
                last_failure_at INTEGER NOT NULL DEFAULT 0,
                locked_until INTEGER NOT NULL DEFAULT 0
            );
            CREATE INDEX device_tokens_by_user ON device_tokens (user_id, device_id);
            """),
        Migration(version: 4, name: "client budgets", sql: clientBudgets),
        Migration(version: 5, name: "second factors", sql: secondFactors),
        historyIndexes,
        deviceTrustByToken,
        emailTokens,
        phoneChanges,
        accountDeletions,
        mailLocales,
        phoneNotices,
        mailQueue,
        passkeys,
        appAttest,
    ]

    /// The same migrations in PostgreSQL's types (`PostgresDDL`), so the two never drift apart.
    public static let postgres = PostgresDDL.migrations(fromSQLite: sqlite)

    /// Indexes for the paths that read a user's growing history: a login drops the user's audit
    /// events past retention by time (`at`) instead of reading the whole trail, and the session
    /// list walks live sessions newest first instead of sorting them. The same SQL on both dialects.
    static let historyIndexes = Migration(version: 6, name: "history indexes", sql: """
        CREATE INDEX audit_events_by_user_time ON audit_events (user_id, at);
        DROP INDEX sessions_by_user;
        CREATE INDEX sessions_by_user ON sessions (user_id, revoked_at, created_at, session_id);
        """)

    /// A device is trusted through a device token that paid a factor, never through its bare id:
    /// each session remembers the token its login was given (or presented), and passing a
    /// factor trusts that token. Trust kept by device id before this step is not carried over
    /// (it could be a stranger's copy of the id), so each device pays one factor once more.
    static let deviceTrustByToken = Migration(version: 7, name: "device trust by token", sql: """
        ALTER TABLE device_tokens ADD COLUMN trusted_at INTEGER;
        ALTER TABLE sessions ADD COLUMN device_token_hash BLOB;
        DROP TABLE devices;
        """)

    /// Verified e-mail addresses and the links that prove or change them. A user's address
    /// counts as verified while `email_verified_at` is set; every link is a row here, hashed,
    /// single use. An e-mail change is two rows sharing `change_id`: the confirmation mailed to
    /// the new address and the revert link mailed to the old one (`email` is the address each
    /// row is about; `previous_verified_at` keeps the old address's state for a revert).
    static let emailTokens = Migration(version: 8, name: "email tokens", sql: """
        ALTER TABLE users ADD COLUMN email_verified_at INTEGER;
        CREATE TABLE email_tokens (
            token_hash BLOB PRIMARY KEY,
            purpose TEXT NOT NULL,
            user_id TEXT NOT NULL REFERENCES users(user_id),
            email TEXT NOT NULL,
            change_id TEXT,
            previous_verified_at INTEGER,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            used_at INTEGER
        );
        CREATE INDEX email_tokens_by_user ON email_tokens (user_id, purpose, created_at);
        CREATE INDEX email_tokens_by_change ON email_tokens (change_id);
        """)

    /// When the user last put another phone number on the profile: for the cooling-off after
    /// it, SMS codes confirm no money (a SIM swap's defence).
    static let phoneChanges = Migration(version: 9, name: "phone changes", sql: """
        ALTER TABLE users ADD COLUMN phone_changed_at INTEGER;
        """)

    /// Each account deletion, kept as the saga's durable state: which service has done its part.
    /// Once deleted, a row holds only the ids, the times and the pseudonym accounts keeps the
    /// ledger under; the user's other rows are gone.
    static let accountDeletions = Migration(version: 10, name: "account deletions", sql: """
        CREATE TABLE account_deletions (
            user_id TEXT PRIMARY KEY,
            pseudonym TEXT NOT NULL UNIQUE,
            email TEXT,
            phone TEXT,
            state TEXT NOT NULL,
            detail TEXT,
            balances TEXT,
            verification_done_at INTEGER,
            reset_done_at INTEGER,
            mail_lease_until INTEGER,
            requested_at INTEGER NOT NULL,
            finished_at INTEGER
        );
        CREATE INDEX account_deletions_by_state ON account_deletions (state, requested_at);
        """)

    /// The language of each account's mails (null: English, as before), kept with a deletion
    /// for its last mail.
    static let mailLocales = Migration(version: 11, name: "mail locales", sql: """
        ALTER TABLE users ADD COLUMN locale TEXT;
        ALTER TABLE account_deletions ADD COLUMN locale TEXT;
        """)

    /// The SMS notices owed to numbers an account left (`identity.change_phone`), kept until
    /// verification reports each sent: then the number goes.
    static let phoneNotices = Migration(version: 12, name: "phone notices", sql: """
        CREATE TABLE phone_notices (
            notice_id INTEGER PRIMARY KEY,
            user_id TEXT NOT NULL,
            number TEXT NOT NULL,
            locale TEXT NOT NULL,
            created_at INTEGER NOT NULL
        );
        """)

    /// Account mails waiting for the mail workers (`MailQueue`), each sealed whole.
    static let mailQueue = Migration(version: 13, name: "mail queue", sql: """
        CREATE TABLE mail_queue (
            mail_id INTEGER PRIMARY KEY,
            sealed BLOB NOT NULL,
            attempts INTEGER NOT NULL,
            next_attempt_at INTEGER NOT NULL,
            lease_until INTEGER,
            created_at INTEGER NOT NULL
        );
        CREATE INDEX mail_queue_due ON mail_queue (next_attempt_at, mail_id);
        """)

    /// WebAuthn credentials and the challenges of their ceremonies. A credential id is unique
    /// across users; `sign_count` only grows (or stays 0, as synced passkeys send); a counter
    /// that went backwards sets `flagged_at`, after which the passkey signs nothing in.
    /// A challenge's `user_id` is null when any user's passkey may answer it (usernameless
    /// sign-in) and '' when it was issued for a username nobody has. A user's passkey handle is
    /// the opaque WebAuthn user id (random, made at the first registration), never the user id.
    static let passkeys = Migration(version: 14, name: "passkeys", sql: """
        CREATE TABLE passkeys (
            passkey_id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL REFERENCES users(user_id),
            credential_id BLOB NOT NULL UNIQUE,
            public_key BLOB NOT NULL,
            sign_count INTEGER NOT NULL,
            aaguid BLOB NOT NULL,
            attestation TEXT NOT NULL,
            backup_eligible INTEGER NOT NULL,
            backed_up INTEGER NOT NULL,
            transports TEXT NOT NULL,
            name TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            last_used_at INTEGER,
            flagged_at INTEGER
        );
        CREATE INDEX passkeys_by_user ON passkeys (user_id, created_at);
        CREATE TABLE passkey_challenges (
            challenge_hash BLOB PRIMARY KEY,
            purpose TEXT NOT NULL,
            user_id TEXT,
            expires_at INTEGER NOT NULL,
            used_at INTEGER
        );
        CREATE INDEX passkey_challenges_by_expiry ON passkey_challenges (expires_at);
        ALTER TABLE users ADD COLUMN passkey_handle BLOB;
        CREATE UNIQUE INDEX users_by_passkey_handle ON users (passkey_handle);
        """)

    /// The App Attest key that vouched for a device key at enrolment: its app, environment,
    /// public key, the newest assertion counter taken and Apple's receipt; for a passkey
    /// registered from the app, its app and environment.
    static let appAttest = Migration(version: 15, name: "app attest", sql: """
        ALTER TABLE device_keys ADD COLUMN attest_app_id TEXT;
        ALTER TABLE device_keys ADD COLUMN attest_environment TEXT;
        ALTER TABLE device_keys ADD COLUMN attest_public_key BLOB;
        ALTER TABLE device_keys ADD COLUMN attest_counter INTEGER;
        ALTER TABLE device_keys ADD COLUMN attest_receipt BLOB;
        ALTER TABLE passkeys ADD COLUMN attest_app_id TEXT;
        ALTER TABLE passkeys ADD COLUMN attest_environment TEXT;
        """)

    /// Per-address token buckets shared by every replica (`StoredClientBudget`, PostgreSQL);
    /// one SQLite process keeps them in memory, and the table stays empty there.
    private static let clientBudgets =
        """
        CREATE TABLE client_budgets (
            budget TEXT NOT NULL,
            address TEXT NOT NULL,
            tokens REAL NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (budget, address)
        );
        CREATE INDEX client_budgets_by_age ON client_budgets (budget, updated_at);
        """

    /// Authenticator apps (the secret sealed under the identity key), recovery codes (hashed),
    /// and the one budget of wrong codes they share per user.
    private static let secondFactors =
        """
        CREATE TABLE totp_secrets (
            user_id TEXT PRIMARY KEY REFERENCES users(user_id),
            sealed_secret BLOB NOT NULL,
            algorithm TEXT NOT NULL,
            digits INTEGER NOT NULL,
            period INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            activated_at INTEGER,
            last_step INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE recovery_codes (
            user_id TEXT NOT NULL REFERENCES users(user_id),
            code_hash BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            used_at INTEGER,
            PRIMARY KEY (user_id, code_hash)
        );
        CREATE TABLE factor_throttle (
            user_id TEXT PRIMARY KEY,
            failures INTEGER NOT NULL,
            consecutive INTEGER NOT NULL,
            last_failure_at INTEGER NOT NULL,
            locked_until INTEGER NOT NULL
        );
        """
}
