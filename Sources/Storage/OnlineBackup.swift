import CSQLite
import Platform

extension Database {
    /// A consistent copy of the SQLite file at `source`, which another process may be writing,
    /// through SQLite's online backup API (never a file copy of a live WAL database). For the
    /// operator's `latchkey backup`; opens no migrations, so it works on any service's file.
    /// `progress` hears (pages copied, pages in all) after each step of `pagesPerStep` pages.
    public static func backup(
        databaseAt source: String, to destination: String, pagesPerStep: Int32 = -1, progress: ((Int, Int) -> Void)? = nil
    ) throws(StorageError) {
        guard access(source, R_OK) == 0 else { throw .io("cannot read \(source)") }
        let temporary = destination + ".partial-\(getpid())"
        unlink(temporary)
        defer { unlink(temporary) }
        do {
            let sourceHandle = try SQLiteConnection.openPlain(path: source)
            defer { sqlite3_close_v2(sourceHandle) }
            sqlite3_busy_timeout(sourceHandle, 5000)
            PrivateFile.prepareDatabase(at: temporary)
            let destinationHandle = try SQLiteConnection.openPlain(path: temporary)
            defer { sqlite3_close_v2(destinationHandle) }
            guard let backup = sqlite3_backup_init(destinationHandle, "main", sourceHandle, "main") else {
                throw SQLiteConnection.error(destinationHandle, sqlite3_errcode(destinationHandle))
            }
            var step: Int32
            repeat {
                step = sqlite3_backup_step(backup, pagesPerStep)
                let total = Int(sqlite3_backup_pagecount(backup))
                progress?(total - Int(sqlite3_backup_remaining(backup)), total)
            } while step == SQLITE_OK || step == SQLITE_BUSY || step == SQLITE_LOCKED
            let finish = sqlite3_backup_finish(backup)
            if step != SQLITE_DONE { throw StorageError.from(code: step, message: "backup step failed") }
            if finish != SQLITE_OK { throw SQLiteConnection.error(destinationHandle, finish) }
        }
        guard rename(temporary, destination) == 0 else {
            throw .io("cannot move backup into place: \(String(cString: strerror(errno)))")
        }
    }
}
