import FoundationEssentials
import Platform

public struct PostgresOptions: Sendable {
    /// Connections this process opens at most (size it to the worker threads that use it).
    public var poolSize = 16
    /// A statement running longer is cancelled and the transaction answers `.busy`.
    public var statementTimeoutMilliseconds = 5_000
    public var connectTimeoutSeconds = 3
    /// After a failed connect, requests fail fast for this long instead of each waiting for a
    /// connect timeout; it doubles per failure up to `maximumBackoffMilliseconds`.
    public var initialBackoffMilliseconds = 100
    public var maximumBackoffMilliseconds = 2_000
    /// How often a write whose SERIALIZABLE transaction conflicted runs again.
    public var serializationRetries = 30
    public var applicationName = "latchkey"

    public init() {}
}

/// A service's tables in their own PostgreSQL schema, behind the same `SQLDatabase` interface
/// as the SQLite file. `write` runs SERIALIZABLE and retries its body after a serialization
/// failure, so a store's read-then-write logic keeps SQLite's one-writer meaning across any
/// number of replicas. Settings travel with each transaction (`SET LOCAL`), never with the
/// session, so PgBouncer may hand each transaction a different server connection.
public final class PostgresDatabase: SQLDatabase, @unchecked Sendable {
    public var dialect: SQLDialect { .postgres }
    public let schema: String
    public let redactedURL: String
    private let url: String
    private let options: PostgresOptions
    private let pool: PostgresPool

    /// Connects, creates the schema if needed and applies `migrations` once, however many
    /// replicas start at the same moment (they queue on an advisory lock).
    public init(url: String, schema: String, migrations: [Migration], options: PostgresOptions = .init()) throws(StorageError) {
        precondition(schema.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || $0 == UInt8(ascii: "_") },
                     "a schema name is lower-case letters and underscores")
        precondition(options.poolSize >= 1, "PostgresOptions.poolSize must be at least 1")
        self.url = url
        self.schema = schema
        self.options = options
        redactedURL = PostgresURL.redacted(url)
        let connectURL = url
        pool = PostgresPool(size: options.poolSize, options: options) { () throws(StorageError) in
            try PostgresConnection(url: connectURL, applicationName: options.applicationName, connectTimeoutSeconds: options.connectTimeoutSeconds)
        }
        try PostgresMigrator(schema: schema, migrations: migrations).migrate(using: pool)
    }

    @discardableResult
    public func write<T>(_ body: (Connection) throws -> T) throws -> T {
        var attempt = 0
        while true {
            do {
                return try transaction("BEGIN ISOLATION LEVEL SERIALIZABLE", body)
            } catch StorageError.serializationFailure where attempt < options.serializationRetries {
                attempt += 1
                // A short random pause lets the transaction that won finish first.
                Pause.microseconds(Int64.random(in: 0...Int64(min(attempt, 10) * 500)))
            }
        }
    }

    @discardableResult
    public func read<T>(_ body: (Connection) throws -> T) throws -> T {
        try transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", body)
    }

    public func schemaVersion() throws -> Int {
        try read { c in Int(try c.queryOne("SELECT MAX(version) AS v FROM schema_migrations")?.optionalInt("v") ?? 0) }
    }

    /// Drops every idle connection (tests: after the server restarted).
    public func closeIdleConnections() { pool.closeIdle() }

    private func transaction<T>(_ begin: String, _ body: (Connection) throws -> T) throws -> T {
        let connection = try pool.checkOut()
        var healthy = true
        defer { pool.checkIn(connection, healthy: healthy && connection.isHealthy) }
        let prologue = "\(begin); SET LOCAL search_path TO \(schema); SET LOCAL statement_timeout = \(options.statementTimeoutMilliseconds)"
        do {
            try connection.execute(prologue)
        } catch {
            healthy = false
            throw error
        }
        do {
            let value = try body(connection)
            try connection.execute("COMMIT")
            return value
        } catch {
            if connection.isHealthy { _ = try? connection.execute("ROLLBACK") } else { healthy = false }
            throw error
        }
    }
}

/// Up to `size` connections, opened on demand. When the server cannot be reached, callers fail
/// fast with `.unavailable` during a back-off instead of queueing behind connect timeouts.
final class PostgresPool: @unchecked Sendable {
    private let size: Int
    private let options: PostgresOptions
    private let connect: () throws(StorageError) -> PostgresConnection
    private let condition = Condition()
    private var idle: [PostgresConnection] = []
    private var open = 0
    private var failures = 0
    private var retryAfter = Date.distantPast
    private var lastError = ""

    init(size: Int, options: PostgresOptions, connect: @escaping () throws(StorageError) -> PostgresConnection) {
        self.size = size
        self.options = options
        self.connect = connect
    }

    func checkOut() throws(StorageError) -> PostgresConnection {
        condition.lock()
        let deadline = Date().addingTimeInterval(Double(options.connectTimeoutSeconds))
        while idle.isEmpty && open >= size {
            guard condition.wait(until: deadline) else {
                condition.unlock()
                throw .unavailable("no database connection free within \(options.connectTimeoutSeconds) s")
            }
        }
        if let connection = idle.popLast() {
            condition.unlock()
            return connection
        }
        guard Date() >= retryAfter else {
            let message = lastError
            condition.unlock()
            throw .unavailable(message)
        }
        open += 1
        condition.unlock()
        do {
            let connection = try connect()
            condition.lock()
            failures = 0
            condition.unlock()
            return connection
        } catch {
            condition.lock()
            open -= 1
            failures += 1
            let backoff = min(options.initialBackoffMilliseconds << min(failures - 1, 16), options.maximumBackoffMilliseconds)
            retryAfter = Date().addingTimeInterval(Double(backoff) / 1000)
            lastError = error.description
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    func checkIn(_ connection: PostgresConnection, healthy: Bool) {
        condition.lock()
        if healthy { idle.append(connection) } else { open -= 1 }
        condition.signal()
        condition.unlock()
    }

    func closeIdle() {
        condition.lock()
        open -= idle.count
        idle.removeAll()
        condition.broadcast()
        condition.unlock()
    }
}
