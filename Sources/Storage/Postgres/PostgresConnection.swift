import CPostgres
import FoundationEssentials
import Glibc
import Platform

/// One libpq connection, used by one thread at a time inside `PostgresDatabase.write`/`read`.
/// Every statement goes through the extended query protocol with bound parameters (`?` in the
/// SQL becomes `$1`, `$2`, ...), unnamed, so it also works through PgBouncer in transaction
/// pooling mode, which cannot follow named server-side statements.
public final class PostgresConnection: SQLConnection {
    public var dialect: SQLDialect { .postgres }
    let handle: OpaquePointer
    /// libpq's functions, loaded on the first connection a process opens.
    let pq: LibPQ
    /// `?`-placeholder SQL rewritten to `$n` form, by text: the rewrite runs once per statement.
    private var rewritten: [String: String] = [:]
    static let rewriteCacheLimit = 512

    /// Opens a connection. `url` is anything libpq accepts (a URL or `key=value` pairs);
    /// errors name the server without the password.
    init(url: String, applicationName: String, connectTimeoutSeconds: Int) throws(StorageError) {
        let pq = try LibPQ.shared()
        // Later keywords win: the URL's own settings override these defaults.
        let keywords = ["connect_timeout", "application_name", "dbname"]
        let values = ["\(connectTimeoutSeconds)", applicationName, url]
        let connection = withCStringArray(keywords) { keywordPointers in
            withCStringArray(values) { valuePointers in pq.connectdbParams(keywordPointers, valuePointers, 1) }
        }
        guard let connection else { throw .unavailable("cannot connect to \(PostgresURL.redacted(url)): out of memory") }
        guard pq.status(connection) == CONNECTION_OK else {
            let message = Self.message(of: connection, pq)
            pq.finish(connection)
            throw .unavailable("cannot connect to \(PostgresURL.redacted(url)): \(message)")
        }
        // Server notices ("already exists, skipping") would go raw to stderr; logs are JSON lines.
        _ = pq.setNoticeProcessor(connection, { _, _ in }, nil)
        handle = connection
        self.pq = pq
    }

    deinit { pq.finish(handle) }

    var isHealthy: Bool { pq.status(handle) == CONNECTION_OK }

    public func execute(_ sql: String) throws(StorageError) {
        let result = pq.exec(handle, sql)
        defer { pq.clear(result) }
        try check(result)
    }

    @discardableResult
    public func run(_ sql: String, _ bindings: [SQLValue]) throws(StorageError) -> Int {
        let result = try executeParameters(sql, bindings)
        defer { pq.clear(result) }
        return Int(pq.cmdTuples(result).map { String(cString: $0) } ?? "") ?? 0
    }

    public func query(_ sql: String, _ bindings: [SQLValue]) throws(StorageError) -> [Row] {
        let result = try executeParameters(sql, bindings)
        defer { pq.clear(result) }
        return PostgresResult.rows(result, pq)
    }

    private func executeParameters(_ sql: String, _ bindings: [SQLValue]) throws(StorageError) -> OpaquePointer? {
        let text = try numberedPlaceholders(sql, count: bindings.count)
        let parameters = PostgresParameters(bindings)
        let result = parameters.withPointers { types, values, lengths, formats in
            pq.execParams(handle, text, Int32(bindings.count), types, values, lengths, formats, 0)
        }
        do {
            try check(result)
        } catch {
            pq.clear(result)
            throw error
        }
        return result
    }

    private func numberedPlaceholders(_ sql: String, count: Int) throws(StorageError) -> String {
        if let cached = rewritten[sql] { return cached }
        let (text, found) = PostgresPlaceholders.rewrite(sql)
        guard found == count else { throw .misuse("statement expects \(found) bindings, got \(count)") }
        if rewritten.count >= Self.rewriteCacheLimit { rewritten.removeAll() }
        rewritten[sql] = text
        return text
    }

    private func check(_ result: OpaquePointer?) throws(StorageError) {
        guard let result else { throw PostgresErrors.connectionLost(Self.message(of: handle, pq)) }
        switch pq.resultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY: return
        default: throw PostgresErrors.error(from: result, connectionOK: isHealthy, pq)
        }
    }

    static func message(of connection: OpaquePointer, _ pq: LibPQ) -> String {
        (pq.errorMessage(connection).map { String(cString: $0) } ?? "").trimmingWhitespace()
    }
}

/// Calls `body` with a NULL-terminated array of C strings that live for the call.
private func withCStringArray<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    return body(copies.map { UnsafePointer($0) } + [nil])
}
