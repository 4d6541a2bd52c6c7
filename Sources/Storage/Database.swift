import CSQLite
import FoundationEssentials
import Platform

public enum Synchronous: String, Sendable {
    /// WAL + NORMAL: durable against application crashes, may lose the last commits on power loss.
    case normal = "NORMAL"
    /// WAL + FULL: every COMMIT is fsynced before it returns. The default; required for money.
    case full = "FULL"
}

public struct DatabaseOptions: Sendable {
    public var busyTimeoutMilliseconds: Int = 5000
    public var synchronous: Synchronous = .full
    /// Reader connections in the pool (at least 1).
    public var readerCount: Int = 4

    public init(busyTimeoutMilliseconds: Int = 5000, synchronous: Synchronous = .full, readerCount: Int = 4) {
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.synchronous = synchronous
        self.readerCount = readerCount
    }
}

/// One schema step. Applied once, in version order, inside its own transaction; recorded in
/// `schema_migrations`. The SQL must not contain its own BEGIN/COMMIT.
public struct Migration: Sendable {
    public let version: Int
    public let name: String
    public let sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }
}

/// A SQLite file in WAL mode: one writer connection behind a lock (writes are serialized) and a
/// small pool of reader connections (readers never block the writer, nor it them).
public final class Database: SQLDatabase, @unchecked Sendable {
    public var dialect: SQLDialect { .sqlite }
    public let path: String
    public let options: DatabaseOptions

    // Invariant: `writer` is touched only while `writeLock` is held; a reader only while it is
    // checked out of `idleReaders` (guarded by `readersAvailable`).
    private let writer: SQLiteConnection
    private let writeLock = Lock()
    private var idleReaders: [SQLiteConnection]
    private let readersAvailable = Condition()

    public init(path: String, options: DatabaseOptions = .init(), migrations: [Migration]) throws(StorageError) {
        precondition(options.readerCount >= 1, "DatabaseOptions.readerCount must be at least 1")
        for (a, b) in zip(migrations, migrations.dropFirst()) {
            precondition(a.version < b.version, "migration versions must be strictly increasing (\(a.version), \(b.version))")
        }
        self.path = path
        self.options = options
        PrivateFile.prepareDatabase(at: path)
        writer = try SQLiteConnection(path: path, role: .writer, options: options)
        try Database.migrate(writer, migrations)
        var readers: [SQLiteConnection] = []
        for _ in 0..<options.readerCount {
            readers.append(try SQLiteConnection(path: path, role: .reader, options: options))
        }
        idleReaders = readers
    }

    /// Runs `body` on the writer inside `BEGIN IMMEDIATE` ... `COMMIT`. Writes from all threads are
    /// serialized here. Any error thrown (by SQLite or by `body`) rolls the transaction back and is
    /// rethrown as is: the first error wins; a failing rollback never hides it. Not reentrant:
    /// do not call `write` from inside `body`.
    @discardableResult
    public func write<T>(_ body: (Connection) throws -> T) throws -> T {
        writeLock.lock()
        defer { writeLock.unlock() }
        return try writer.transaction("BEGIN IMMEDIATE") { try body($0) }
    }

    /// `write`, but with `durable` false the commit does not wait for the disk when the file is
    /// `synchronous=FULL` (this one transaction runs at NORMAL): an application crash or kill -9
    /// still loses nothing, a power loss may lose it, and the next durable commit makes it durable
    /// too (the WAL is synced in order). Only for writes whose loss nobody was told about, or
    /// whose loss only repeats work (a message sent again under its key).
    @discardableResult
    public func write<T>(durable: Bool, _ body: (Connection) throws -> T) throws -> T {
        guard !durable && options.synchronous == .full else { return try write(body) }
        writeLock.lock()
        defer { writeLock.unlock() }
        try writer.execute("PRAGMA synchronous = NORMAL")
        defer {
            // Every later write must wait for the disk again: a writer that cannot be set back stops the process.
            do { try writer.execute("PRAGMA synchronous = FULL") } catch { fatalError("cannot restore synchronous=FULL: \(error)") }
        }
        return try writer.transaction("BEGIN IMMEDIATE") { try body($0) }
    }

    /// Runs `body` on a reader inside a deferred `BEGIN` ... `COMMIT`: every query in `body` sees the
    /// same snapshot (taken at its first read), whatever the writer commits meanwhile. Writes fail
    /// with `.readOnly`. Waits for a free reader when all are busy.
    @discardableResult
    public func read<T>(_ body: (Connection) throws -> T) throws -> T {
        let reader = checkOutReader()
        defer { checkIn(reader) }
        return try reader.transaction("BEGIN") { try body($0) }
    }

    /// A consistent copy of the live database at `path`, taken with SQLite's online backup API from
    /// a reader snapshot, so writers keep going meanwhile. Written to a temporary file beside `path`
    /// and renamed into place, so `path` is never a half-written backup.
    public func backup(to path: String) throws(StorageError) {
        let temporary = path + ".partial-\(getpid())"
        unlink(temporary)
        defer { unlink(temporary) }
        do {
            PrivateFile.prepareDatabase(at: temporary)
            let destination = try SQLiteConnection.openPlain(path: temporary)
            defer { sqlite3_close_v2(destination) }
            let reader = checkOutReader()
            defer { checkIn(reader) }
            guard let backup = sqlite3_backup_init(destination, "main", reader.db, "main") else {
                throw SQLiteConnection.error(destination, sqlite3_errcode(destination))
            }
            // One step over all pages: the read lock is held throughout, so the copy is one
            // snapshot and never restarts; WAL lets the writer continue.
            let step = sqlite3_backup_step(backup, -1)
            let finish = sqlite3_backup_finish(backup)
            if step != SQLITE_DONE { throw StorageError.from(code: step, message: "backup step failed") }
            if finish != SQLITE_OK { throw SQLiteConnection.error(destination, finish) }
        }
        guard rename(temporary, path) == 0 else {
            throw .io("cannot move backup into place: \(String(cString: strerror(errno)))")
        }
    }

    /// Copies the WAL back into the database file and truncates it (TRUNCATE checkpoint). Waits up
    /// to the busy timeout for readers; if some still hold old snapshots, checkpoints what it can
    /// and returns without error (the next checkpoint finishes the job).
    public func checkpoint() throws(StorageError) {
        writeLock.lock()
        defer { writeLock.unlock() }
        let rc = sqlite3_wal_checkpoint_v2(writer.db, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
        if rc != SQLITE_OK && rc != SQLITE_BUSY { throw SQLiteConnection.error(writer.db, rc) }
    }

    /// The highest applied migration version (0 for none).
    public func schemaVersion() throws -> Int {
        try read { c in Int(try c.queryOne("SELECT MAX(version) AS v FROM schema_migrations")?.optionalInt("v") ?? 0) }
    }

    // MARK: - Internals

    /// For tests: run `body` on the writer connection outside any transaction.
    func withWriter<T>(_ body: (SQLiteConnection) throws -> T) rethrows -> T {
        writeLock.lock()
        defer { writeLock.unlock() }
        return try body(writer)
    }

    private func checkOutReader() -> SQLiteConnection {
        readersAvailable.lock()
        defer { readersAvailable.unlock() }
        while idleReaders.isEmpty { readersAvailable.wait() }
        return idleReaders.removeLast()
    }

    private func checkIn(_ reader: SQLiteConnection) {
        readersAvailable.lock()
        idleReaders.append(reader)
        readersAvailable.signal()
        readersAvailable.unlock()
    }

    private static func migrate(_ c: SQLiteConnection, _ migrations: [Migration]) throws(StorageError) {
        let known = migrations.last?.version ?? 0
        // Look before writing, so a fully migrated read-only file still opens.
        let hasTable = try c.queryOne(
            "SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'") != nil
        var applied = Set<Int>()
        if hasTable {
            for row in try c.query("SELECT version FROM schema_migrations") { applied.insert(Int(try row.int("version"))) }
        }
        if let found = applied.max(), found > known { throw .schemaTooNew(found: found, known: known) }
        let pending = migrations.filter { !applied.contains($0.version) }
        if pending.isEmpty { return }
        do {
            try c.transaction("BEGIN IMMEDIATE") { c in
                try c.execute("""
                    CREATE TABLE IF NOT EXISTS schema_migrations (
                        version INTEGER PRIMARY KEY,
                        name TEXT NOT NULL,
                        applied_at INTEGER NOT NULL
                    )
                    """)
            }
            for m in pending {
                try c.transaction("BEGIN IMMEDIATE") { c in
                    // Another process may have migrated since we looked; check under the write lock.
                    if let max = try c.queryOne("SELECT MAX(version) AS v FROM schema_migrations")?.optionalInt("v"),
                        max > known
                    {
                        throw StorageError.schemaTooNew(found: Int(max), known: known)
                    }
                    if try c.queryOne("SELECT 1 AS present FROM schema_migrations WHERE version = ?", [SQLValue(m.version)]) != nil {
                        return
                    }
                    try c.execute(m.sql)
                    try c.run(
                        "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                        [SQLValue(m.version), .text(m.name), .integer(Int64(Date().timeIntervalSince1970))])
                }
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw .misuse("migration failed: \(error)")  // unreachable: only StorageError is thrown above
        }
    }
}

extension SQLiteConnection {
    /// A bare handle for a backup destination (no WAL, no pool).
    static func openPlain(path: String) throws(StorageError) -> OpaquePointer {
        processConfigured
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw StorageError.from(code: rc, message: "cannot open backup file: \(message)")
        }
        return handle
    }
}

/// The machine's bare commit rate: the ceiling for any write-per-request workload.
public enum CommitProbe {
    /// A probe's rate, and the size of the write-ahead log when its timed commits began.
    public struct Measurement: Sendable {
        public let commitsPerSecond: Double
        public let walBytesWhenTimed: Int64
    }

    /// Commits `count` single-row INSERT transactions to a temporary database in `directory`, once
    /// it is warm (`measure`), and returns commits per second. The file is removed afterwards.
    public static func commitsPerSecond(directory: String, count: Int, synchronous: Synchronous) throws -> Double {
        try measure(directory: directory, count: count, synchronous: synchronous).commitsPerSecond
    }

    /// Times `count` commits once the database is in the state a running service's is in: its
    /// write-ahead log already at the size where SQLite checkpoints it and starts over from the
    /// beginning. On a fresh file every commit extends the log, so its `fdatasync` must also
    /// write the file's new size; the first 2,000 commits ran at 3,800/s where the steady state
    /// ran at 5,500-8,700/s on the same disk, which held the flows to too low a ceiling.
    public static func measure(directory: String, count: Int, synchronous: Synchronous) throws -> Measurement {
        precondition(count > 0, "count must be positive")
        let path = directory.appendingPathComponent("commit-probe-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).sqlite")
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) } }
        let db = try Database(
            path: path, options: DatabaseOptions(synchronous: synchronous, readerCount: 1),
            migrations: [Migration(version: 1, name: "probe", sql: "CREATE TABLE probe (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")])
        func commit(_ i: Int) throws { try db.write { c in try c.run("INSERT INTO probe (n) VALUES (?)", [SQLValue(i)]) } }
        let fullLog = try db.read { c in
            let pages = try c.queryOne("PRAGMA wal_autocheckpoint")!.int("wal_autocheckpoint")
            let pageSize = try c.queryOne("PRAGMA page_size")!.int("page_size")
            return pages * (pageSize + 24)  // each frame: a 24-byte header and the page
        }
        var warmUp = 0
        while fileSize(atPath: path + "-wal") < fullLog && warmUp < 100_000 {
            try commit(warmUp)
            warmUp += 1
        }
        let walBytesWhenTimed = Int64(fileSize(atPath: path + "-wal"))
        let clock = ContinuousClock()
        let start = clock.now
        for i in 0..<count { try commit(warmUp + i) }
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Measurement(commitsPerSecond: Double(count) / seconds, walBytesWhenTimed: walBytesWhenTimed)
    }
}
