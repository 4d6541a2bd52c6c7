/// Every `LATCHKEY_*` name that some part of Latchkey reads. One list for every executable:
/// compose gives every service the same `.env`, and `latchkey up` passes its own variables
/// (`LATCHKEY_DEMO_PASSWORD`) to its children, so a name is refused only when nothing reads it.
/// A typo must not turn a setting off in silence (`LATCHKEY_SERVICE_TOKNE` would leave internal
/// calls unauthenticated), so `Configuration` stops the process on any other name.
public enum KnownEnvironment {
    /// The options of every executable, as `latchkey options` prints them (an end-to-end test
    /// compares the two: a new option goes here too).
    public static let optionNames: Set<String> = [
        "LATCHKEY_AASA_APP_IDS", "LATCHKEY_AASA_PATHS", "LATCHKEY_ACCOUNTS", "LATCHKEY_APP_LINK_SCHEME", "LATCHKEY_ACCOUNTS_KEY", "LATCHKEY_ADDRESS",
        "LATCHKEY_AUDIT_RETENTION_DAYS", "LATCHKEY_BASE_PORT", "LATCHKEY_BRAND", "LATCHKEY_BREACHED_PASSWORDS",
        "LATCHKEY_CHALLENGE_CLIENT_BURST", "LATCHKEY_CHALLENGE_CLIENT_PER_MINUTE", "LATCHKEY_CONNECTIONS",
        "LATCHKEY_CONNECTIONS_PER_REPLICA", "LATCHKEY_CURRENCY", "LATCHKEY_DATABASE_URL", "LATCHKEY_DATA_DIR",
        "LATCHKEY_DEFAULT_COUNTRY", "LATCHKEY_DELETION_WAIT_MS", "LATCHKEY_DELIVERY", "LATCHKEY_DELIVERY_ATTEMPTS", "LATCHKEY_DELIVERY_BACKOFF_MS",
        "LATCHKEY_DELIVERY_WORKERS", "LATCHKEY_DEMO", "LATCHKEY_DEMO_PASSWORD", "LATCHKEY_DEVICE_TOKEN_FREE_FAILURES",
        "LATCHKEY_DEVICE_TOKEN_LIFETIME_DAYS", "LATCHKEY_DEVICE_TOKEN_MAX_FAILURES", "LATCHKEY_DRAIN_TIMEOUT_MS", "LATCHKEY_EMAIL_LINK_TTL_S",
        "LATCHKEY_EMAIL_REVERT_DAYS", "LATCHKEY_ERASURE_POLL_MS",
        "LATCHKEY_EVENT_BACKEND", "LATCHKEY_EVENT_LOOPS", "LATCHKEY_GATEWAY", "LATCHKEY_GROUP_COMMIT_MAX",
        "LATCHKEY_HEALTH_INTERVAL_MS", "LATCHKEY_HTTP_BODY_TIMEOUT_MS", "LATCHKEY_HTTP_CA_FILE",
        "LATCHKEY_HTTP_HEADER_TIMEOUT_MS", "LATCHKEY_HTTP_IDLE_TIMEOUT_MS", "LATCHKEY_HTTP_LISTEN",
        "LATCHKEY_HTTP_MAX_BODY_BYTES", "LATCHKEY_HTTP_MAX_CONNECTIONS", "LATCHKEY_HTTP_MAX_CONNECTIONS_PER_ADDRESS",
        "LATCHKEY_HTTP_MAX_HEADERS", "LATCHKEY_HTTP_MAX_HEADER_BYTES", "LATCHKEY_HTTP_MAX_PIPELINED",
        "LATCHKEY_HTTP_MAX_REQUEST_LINE_BYTES", "LATCHKEY_HTTP_REQUEST_TIMEOUT_MS", "LATCHKEY_HTTP_TIMEOUT_MS",
        "LATCHKEY_HTTP_WRITE_TIMEOUT_MS", "LATCHKEY_IDENTITY", "LATCHKEY_IDENTITY_KEY", "LATCHKEY_IDLE_TIMEOUT_MS",
        "LATCHKEY_INFLIGHT", "LATCHKEY_JSON", "LATCHKEY_LINE_TIMEOUT_MS", "LATCHKEY_LISTEN", "LATCHKEY_LOGIN_BASE_DELAY_S",
        "LATCHKEY_LOGIN_CLIENT_BURST", "LATCHKEY_LOGIN_CLIENT_PER_MINUTE", "LATCHKEY_LOGIN_FAILURE_DECAY_S",
        "LATCHKEY_LOGIN_FREE_FAILURES", "LATCHKEY_LOGIN_MAX_CONSECUTIVE_FAILURES", "LATCHKEY_LOGIN_MAX_DELAY_S",
        "LATCHKEY_LOG_LEVEL", "LATCHKEY_LOG_SUMMARY_INTERVAL_MS", "LATCHKEY_MAIL_FROM", "LATCHKEY_MAX_AMOUNT_MINOR",
        "LATCHKEY_MAX_CONNECTIONS", "LATCHKEY_MAX_CONNECTIONS_PER_ADDRESS", "LATCHKEY_MAX_DEVICE_TOKENS_PER_USER",
        "LATCHKEY_MAX_INFLIGHT", "LATCHKEY_MAX_KEYS_PER_USER", "LATCHKEY_MAX_LINE_BYTES", "LATCHKEY_METRICS_LISTEN", "LATCHKEY_OUTBOX",
        "LATCHKEY_PASSWORD_MIN_LENGTH", "LATCHKEY_PHONE_CHANGE_COOLING_OFF_H", "LATCHKEY_POSTGRES", "LATCHKEY_PUBLIC_URL", "LATCHKEY_RATE_LIMITS",
        "LATCHKEY_REPLICAS", "LATCHKEY_REPLICA_ID", "LATCHKEY_REQUEST_TIMEOUT_MS", "LATCHKEY_RESET",
        "LATCHKEY_RESET_ADDRESS_INTERVAL_S", "LATCHKEY_RESET_ADDRESS_PER_HOUR", "LATCHKEY_RESET_CLIENT_PER_HOUR",
        "LATCHKEY_RESET_KEY", "LATCHKEY_RESET_LINK_TEMPLATE", "LATCHKEY_RESET_MAIL_ATTEMPTS",
        "LATCHKEY_RESET_MAIL_BACKOFF_MS", "LATCHKEY_RESET_MAIL_QUEUE", "LATCHKEY_RESET_MAIL_WORKERS",
        "LATCHKEY_RESET_NOTIFY_UNKNOWN", "LATCHKEY_RESET_PRODUCT_NAME", "LATCHKEY_RESET_REMOVES_FACTORS_DAYS", "LATCHKEY_RESET_TOKEN_TTL_S",
        "LATCHKEY_RESOLVE_INTERVAL_MS", "LATCHKEY_SCRYPT_LOG_N", "LATCHKEY_SCRYPT_P", "LATCHKEY_SCRYPT_R",
        "LATCHKEY_SECONDS", "LATCHKEY_SERVICE_TOKEN", "LATCHKEY_SESSION_CACHE_MS", "LATCHKEY_SESSION_IDLE_S",
        "LATCHKEY_SESSION_LIFETIME_S", "LATCHKEY_SITEKEY_MAX_BYTES", "LATCHKEY_SMTP_ATTEMPTS", "LATCHKEY_SMTP_BACKOFF_MS",
        "LATCHKEY_SMTP_CA_FILE", "LATCHKEY_SMTP_HELO", "LATCHKEY_SMTP_TIMEOUT_MS", "LATCHKEY_SMTP_URL",
        "LATCHKEY_STEP_UP_WINDOW_S", "LATCHKEY_STOP_ON_STDIN_CLOSE", "LATCHKEY_TARGET", "LATCHKEY_TLS", "LATCHKEY_TLS_CA", "LATCHKEY_TLS_CERT", "LATCHKEY_TLS_KEY",
        "LATCHKEY_TRANSFER_EXPIRY_S", "LATCHKEY_TRUSTED_PROXIES", "LATCHKEY_TWILIO_ACCOUNT_SID",
        "LATCHKEY_TWILIO_AUTH_TOKEN", "LATCHKEY_TWILIO_FROM", "LATCHKEY_TWILIO_URL", "LATCHKEY_UPSTREAM_TIMEOUT_MS",
        "LATCHKEY_VERIFICATION", "LATCHKEY_VERIFICATION_COUNTRIES", "LATCHKEY_VERIFICATION_KEY",
        "LATCHKEY_VERIFICATION_LOCALE", "LATCHKEY_VERIFICATION_MAX_ATTEMPTS", "LATCHKEY_VERIFICATION_MIN_NEXT_WAIT_S",
        "LATCHKEY_VERIFICATION_PROOF_SENDS_PER_NUMBER_10M", "LATCHKEY_VERIFICATION_PROOF_SENDS_PER_NUMBER_DAY",
        "LATCHKEY_VERIFICATION_PUBLIC_NEXT_WAIT_S", "LATCHKEY_VERIFICATION_PUBLIC_WORKFLOW",
        "LATCHKEY_VERIFICATION_SENDS_GLOBAL_DAY", "LATCHKEY_VERIFICATION_SENDS_GLOBAL_HOUR",
        "LATCHKEY_VERIFICATION_SENDS_PER_CLIENT_10M", "LATCHKEY_VERIFICATION_SENDS_PER_CLIENT_DAY",
        "LATCHKEY_VERIFICATION_SENDS_PER_NUMBER_10M", "LATCHKEY_VERIFICATION_SENDS_PER_NUMBER_DAY",
        "LATCHKEY_VERIFICATION_SENDS_PER_USER_10M", "LATCHKEY_VERIFICATION_SENDS_PER_USER_DAY",
        "LATCHKEY_VERIFICATION_TICK_MS", "LATCHKEY_VONAGE_API_KEY", "LATCHKEY_VONAGE_API_SECRET", "LATCHKEY_VONAGE_FROM",
        "LATCHKEY_VONAGE_URL", "LATCHKEY_WEBHOOK_SECRET", "LATCHKEY_WEBHOOK_URL", "LATCHKEY_WORKERS",
        "LATCHKEY_WORKER_QUEUE", "LATCHKEY_WRITE_TIMEOUT_MS",
    ]

    /// Read by the test suites and CI scripts, never by a service; the processes they start
    /// inherit them.
    static let toolingNames: Set<String> = [
        "LATCHKEY_BENCH", "LATCHKEY_FUZZ_SECONDS", "LATCHKEY_SANITIZER", "LATCHKEY_SHARED", "LATCHKEY_SHARED_DATA",
        "LATCHKEY_SHUTDOWN_RUNS", "LATCHKEY_SMTP_INTEROP", "LATCHKEY_SMTP_INTEROP_DIR", "LATCHKEY_TEST_BACKEND", "LATCHKEY_TEST_DATABASE_URL",
        "LATCHKEY_TEST_PGBOUNCER_URL",
    ]

    static let allNames = optionNames.union(toolingNames)

    /// Throws when `environment` holds a `LATCHKEY_*` name that neither the shared list nor
    /// `options` know, naming the nearest known one. Values are never echoed: they may be secrets.
    static func check(_ environment: [String: String], options: [ConfigOption]) throws(ConfigurationError) {
        let known = allNames.union(options.map(\.environmentName))
        let unknown = environment.keys.filter { $0.hasPrefix("LATCHKEY_") && !known.contains($0) }.sorted()
        guard !unknown.isEmpty else { return }
        let described = unknown.map { "\($0) (did you mean \(nearest(to: $0, among: known))?)" }
        throw ConfigurationError(
            "unknown environment variable \(described.joined(separator: ", ")); `latchkey options` lists every name")
    }

    /// The known name with the fewest single-character edits from `name` (ties: alphabetical).
    static func nearest(to name: String, among known: Set<String>) -> String {
        let target = Array(name.utf8)
        return known.sorted().min { editDistance(Array($0.utf8), target) < editDistance(Array($1.utf8), target) } ?? ""
    }

    /// Levenshtein distance, one row at a time.
    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
