import CSQLite

/// One prepared statement. Prepared once in `init`, finalized in `deinit`; always reset after use.
final class Statement {
    let handle: OpaquePointer
    let parameterCount: Int
    /// Column name -> position, built from the first row a query reads and kept for the next
    /// queries: the names of a compiled statement stay put unless SQLite recompiles it after a
    /// schema change, which `reprepares` notices.
    private var columns: (index: ColumnIndex, reprepares: Int32)?

    init(connection db: OpaquePointer, sql: String) throws(StorageError) {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else {
            sqlite3_finalize(stmt)
            throw SQLiteConnection.error(db, rc)
        }
        handle = stmt
        parameterCount = Int(sqlite3_bind_parameter_count(stmt))
    }

    deinit { sqlite3_finalize(handle) }

    /// The result's column index (the first of duplicate names wins). Call after a step gave a row.
    func columnIndex() -> ColumnIndex {
        let reprepares = sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_REPREPARE, 0)
        if let columns, columns.reprepares == reprepares { return columns.index }
        let index = ColumnIndex(names: (0..<Int(sqlite3_column_count(handle))).map { i in
            sqlite3_column_name(handle, Int32(i)).map { String(cString: $0) } ?? "\(i)"
        })
        columns = (index, reprepares)
        return index
    }
}

/// One SQLite handle. Not Sendable: use it only inside `Database.write` / `Database.read`,
/// on the thread that called them. Statements are prepared once and cached by SQL text.
public final class SQLiteConnection: SQLConnection {
    public var dialect: SQLDialect { .sqlite }
    let db: OpaquePointer
    private var statements = StatementCache()
    /// How many times this connection compiled SQL: every `execute`, and each `run`/`query` whose
    /// text was not cached (tests prove the cache works).
    private(set) var prepareCount = 0
    /// Statement lookups that hashed their SQL text (tests prove literals skip it).
    var statementLookupsByText: Int { statements.lookupsByText }

    enum Role { case writer, reader }

    /// Set once, before the process's first connection opens: SQLite reads its global
    /// configuration when it initializes, on the first open. Every open goes through here.
    static let processConfigured: Void = {
        // Without statistics (`sqlite3_memory_used`, which nothing here reads), an allocation
        // inside SQLite takes no process-wide lock: every thread's queries allocate.
        _ = lk_sqlite3_disable_memory_statistics()
    }()

    init(path: String, role: Role, options: DatabaseOptions) throws(StorageError) {
        SQLiteConnection.processConfigured
        var handle: OpaquePointer?
        // NOMUTEX: each connection is used by one thread at a time (the Database's locks guarantee it),
        // so SQLite's per-connection mutex would be pure overhead.
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw StorageError.from(code: rc, message: "cannot open database: \(message)")
        }
        db = handle
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, Int32(clamping: options.busyTimeoutMilliseconds))
        // From here on, a throw runs deinit (the object is fully initialized), which closes `db`.
        switch role {
        case .writer:
            let mode = try queryOne("PRAGMA journal_mode = WAL")?["journal_mode"]
            guard mode == .text("wal") else {
                throw StorageError.misuse("could not enable WAL journal mode (got \(mode?.typeName ?? "nothing"))")
            }
            try execute("PRAGMA synchronous = \(options.synchronous.rawValue)")
            // Savepoints (one per job when a group commit runs a batch again after a job threw)
            // keep the pages they change in a sub-journal; in memory, not in a temporary file
            // written page by page.
            try execute("PRAGMA temp_store = MEMORY")
        case .reader:
            // Readers refuse writes: a write through `read` fails with .readOnly instead of
            // racing the single writer.
            try execute("PRAGMA query_only = ON")
        }
        try execute("PRAGMA foreign_keys = ON")
    }

    deinit {
        statements.removeAll()  // finalize every statement before closing the handle
        sqlite3_close_v2(db)
    }

    // MARK: - Public API

    /// Runs one or more statements without bindings (migrations, pragmas). Not for values.
    public func execute(_ sql: String) throws(StorageError) {
        prepareCount += 1
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(db))
            sqlite3_free(message)
            throw StorageError.from(code: sqlite3_extended_errcode(db), message: text)
        }
    }

    /// Runs one statement with `?` bindings; returns the number of rows it changed.
    @discardableResult
    public func run(_ sql: String, _ bindings: [SQLValue] = []) throws(StorageError) -> Int {
        let stmt = try prepared(sql, bindings)
        defer { reset(stmt) }
        while true {
            let rc = sqlite3_step(stmt.handle)
            if rc == SQLITE_DONE { break }
            if rc != SQLITE_ROW { throw SQLiteConnection.error(db, rc) }
        }
        return Int(sqlite3_changes64(db))
    }

    /// Runs one statement with `?` bindings and returns every row.
    public func query(_ sql: String, _ bindings: [SQLValue] = []) throws(StorageError) -> [Row] {
        let stmt = try prepared(sql, bindings)
        defer { reset(stmt) }
        let s = stmt.handle
        var rows: [Row] = []
        var index: ColumnIndex?
        while true {
            let rc = sqlite3_step(s)
            if rc == SQLITE_DONE { break }
            if rc != SQLITE_ROW { throw SQLiteConnection.error(db, rc) }
            let count = Int(sqlite3_column_count(s))
            if index == nil { index = stmt.columnIndex() }
            var values: [SQLValue] = []
            values.reserveCapacity(count)
            for i in 0..<count { values.append(columnValue(s, Int32(i))) }
            rows.append(Row(index: index!, values: values))
        }
        return rows
    }

    /// The first row, or nil. Add `LIMIT 1` when more rows could match.
    public func queryOne(_ sql: String, _ bindings: [SQLValue] = []) throws(StorageError) -> Row? {
        try query(sql, bindings).first
    }

    // MARK: - Internals

    var isInTransaction: Bool { sqlite3_get_autocommit(db) == 0 }

    /// Ends the open transaction, if any, ignoring failure: used only while another error is
    /// already on its way out, which must stay the error the caller sees.
    func rollbackQuietly() {
        guard isInTransaction else { return }  // SQLite may already have rolled back (e.g. SQLITE_FULL)
        _ = try? run("ROLLBACK")
    }

    /// Runs `body` between `begin` and COMMIT; on any error rolls back and rethrows the first error.
    func transaction<T>(_ begin: String, _ body: (SQLiteConnection) throws -> T) throws -> T {
        try run(begin)
        let value: T
        do {
            value = try body(self)
            try run("COMMIT")  // a failed COMMIT (deferred constraint, disk full) may leave it open
        } catch {
            rollbackQuietly()
            throw error
        }
        return value
    }

    private func prepared(_ sql: String, _ bindings: [SQLValue]) throws(StorageError) -> Statement {
        let stmt: Statement
        if let cached = statements.statement(for: sql) {
            stmt = cached
        } else {
            stmt = try Statement(connection: db, sql: sql)
            prepareCount += 1
            statements.insert(stmt, for: sql)
        }
        guard bindings.count == stmt.parameterCount else {
            throw .misuse("statement expects \(stmt.parameterCount) bindings, got \(bindings.count)")
        }
        for (offset, value) in bindings.enumerated() {
            let i = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null:
                rc = sqlite3_bind_null(stmt.handle, i)
            case .integer(let x):
                rc = sqlite3_bind_int64(stmt.handle, i, x)
            case .real(let x):
                rc = sqlite3_bind_double(stmt.handle, i, x)
            case .text(let s):
                var s = s
                rc = s.withUTF8 { buf in
                    guard let length = Int32(exactly: buf.count) else { return SQLITE_TOOBIG }
                    return buf.withMemoryRebound(to: CChar.self) {
                        lk_sqlite3_bind_text_transient(stmt.handle, i, $0.baseAddress, length)
                    }
                }
            case .blob(let bytes):
                rc = bytes.withUnsafeBytes { buf in
                    guard let length = Int32(exactly: buf.count) else { return SQLITE_TOOBIG }
                    return lk_sqlite3_bind_blob_transient(stmt.handle, i, buf.baseAddress, length)
                }
            }
            if rc != SQLITE_OK {
                reset(stmt)
                // Name the parameter's position and type only; the value stays out of the message.
                throw StorageError.from(
                    code: rc, message: "cannot bind parameter \(i) (\(value.typeName))")
            }
        }
        return stmt
    }

    private func reset(_ stmt: Statement) {
        sqlite3_reset(stmt.handle)
        sqlite3_clear_bindings(stmt.handle)
    }

    private func columnValue(_ s: OpaquePointer, _ i: Int32) -> SQLValue {
        switch sqlite3_column_type(s, i) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(s, i))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(s, i))
        case SQLITE_TEXT:
            guard let p = sqlite3_column_text(s, i) else { return .text("") }
            let n = Int(sqlite3_column_bytes(s, i))  // after _text, so the length is in UTF-8 bytes
            return .text(String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self))
        case SQLITE_BLOB:
            let n = Int(sqlite3_column_bytes(s, i))
            guard n > 0, let p = sqlite3_column_blob(s, i) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: p, count: n)))
        default:
            return .null
        }
    }

    static func error(_ db: OpaquePointer, _ rc: Int32) -> StorageError {
        // The extended code from the handle is more precise than a legacy step/prepare return.
        let extended = sqlite3_extended_errcode(db)
        let code = (extended & 0xff) == (rc & 0xff) ? extended : rc
        return StorageError.from(code: code, message: String(cString: sqlite3_errmsg(db)))
    }
}
