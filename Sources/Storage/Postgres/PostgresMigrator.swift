import FoundationEssentials

/// Forward-only migrations of one schema, applied in one transaction under an advisory lock
/// (transaction-scoped, so it also holds through PgBouncer): ten replicas starting together
/// migrate once, the others wait and then find nothing to do. A schema newer than the binary
/// refuses to start.
struct PostgresMigrator {
    let schema: String
    let migrations: [Migration]

    func migrate(using pool: PostgresPool) throws(StorageError) {
        for (earlier, later) in zip(migrations, migrations.dropFirst()) {
            precondition(earlier.version < later.version, "migration versions must be strictly increasing")
        }
        let connection = try pool.checkOut()
        var healthy = true
        defer { pool.checkIn(connection, healthy: healthy && connection.isHealthy) }
        do {
            try connection.execute("BEGIN")
            try connection.run("SELECT pg_advisory_xact_lock(?)", [.integer(lockKey)])
            try connection.execute("""
                CREATE SCHEMA IF NOT EXISTS \(schema);
                SET LOCAL search_path TO \(schema);
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version INTEGER PRIMARY KEY,
                    name TEXT NOT NULL,
                    applied_at BIGINT NOT NULL
                )
                """)
            let known = migrations.last?.version ?? 0
            let applied = Set(try connection.query("SELECT version FROM schema_migrations").map { Int(try $0.int("version")) })
            if let found = applied.max(), found > known { throw StorageError.schemaTooNew(found: found, known: known) }
            for migration in migrations where !applied.contains(migration.version) {
                try connection.execute(migration.sql)
                try connection.run(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    [SQLValue(migration.version), .text(migration.name), .integer(Int64(Date().timeIntervalSince1970))])
            }
            try connection.execute("COMMIT")
        } catch let error as StorageError {
            if connection.isHealthy { _ = try? connection.execute("ROLLBACK") } else { healthy = false }
            throw error
        } catch {
            healthy = false
            throw .misuse("migration failed: \(error)")
        }
    }

    /// A stable 64-bit key per schema for `pg_advisory_xact_lock` (FNV-1a of "latchkey:<schema>").
    private var lockKey: Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "latchkey:\(schema)".utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }
}
