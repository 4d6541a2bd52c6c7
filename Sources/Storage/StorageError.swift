import CSQLite
import Platform

/// Storage failures. Messages come from SQLite's own text (constraint names, table.column,
/// SQL syntax), never from bound values, so they are safe to log.
public enum StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// UNIQUE or PRIMARY KEY violation; carries `table.column` (or the constraint name).
    case constraintUnique(String)
    /// Any other constraint (CHECK, NOT NULL, FOREIGN KEY, trigger); carries what SQLite names.
    case constraint(String)
    /// The database stayed locked past the busy timeout (another process holds it).
    case busy
    /// The file or connection is read-only (file mode, read-only medium, or a reader connection).
    case readOnly
    /// SQLITE_FULL: the disk (or `max_page_count`) is full; the transaction was rolled back.
    case full
    /// The file is damaged or is not a database.
    case corrupt
    /// Operating-system I/O failure, or the file could not be opened.
    case io(String)
    /// A programming error: bad SQL, wrong number of bindings, API misuse, any other SQLite error.
    case misuse(String)
    /// The file's schema is newer than this binary's migrations; refusing to run.
    case schemaTooNew(found: Int, known: Int)
    /// A row accessor asked for a missing column or the wrong type.
    case column(String)
    /// The database server cannot be reached (refused, lost, restarting, out of connections);
    /// the message names the server without its password.
    case unavailable(String)
    /// Concurrent transactions conflicted (PostgreSQL SERIALIZABLE) more times than were retried.
    case serializationFailure

    public var description: String {
        switch self {
        case .constraintUnique(let what): return "unique constraint failed: \(what)"
        case .constraint(let what): return "constraint failed: \(what)"
        case .busy: return "database is busy (locked past the busy timeout)"
        case .readOnly: return "database is read-only"
        case .full: return "database or disk is full"
        case .corrupt: return "database file is corrupt or not a database"
        case .io(let what): return "database I/O error: \(what)"
        case .misuse(let what): return "database misuse: \(what)"
        case .schemaTooNew(let found, let known):
            return "database schema version \(found) is newer than this binary knows (\(known)); refusing to run"
        case .column(let what): return "row access: \(what)"
        case .unavailable(let what): return "database unavailable: \(what)"
        case .serializationFailure: return "concurrent transactions conflicted; try again"
        }
    }
}

// Extended result codes, spelled out: Swift does not import these composite macros.
private let sqliteConstraintPrimaryKey: Int32 = SQLITE_CONSTRAINT | (6 << 8)
private let sqliteConstraintUnique: Int32 = SQLITE_CONSTRAINT | (8 << 8)

extension StorageError {
    /// Maps an (extended) SQLite result code and SQLite's message to an error.
    static func from(code: Int32, message: String) -> StorageError {
        let primary = code & 0xff
        switch primary {
        case SQLITE_CONSTRAINT:
            let what = constraintSubject(message)
            if code == sqliteConstraintUnique || code == sqliteConstraintPrimaryKey { return .constraintUnique(what) }
            return .constraint(what)
        case SQLITE_BUSY, SQLITE_LOCKED: return .busy
        case SQLITE_READONLY: return .readOnly
        case SQLITE_FULL: return .full
        case SQLITE_CORRUPT, SQLITE_NOTADB: return .corrupt
        case SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_PROTOCOL, SQLITE_NOLFS:
            return .io("\(message) (\(codeName(code)))")
        default:
            return .misuse("\(message) (\(codeName(code)))")
        }
    }

    /// "UNIQUE constraint failed: users.email" -> "users.email"; SQLite names columns, not values.
    static func constraintSubject(_ message: String) -> String {
        if let r = message.firstRange(of: "constraint failed: ") { return String(message[r.upperBound...]) }
        return message
    }

    static func codeName(_ code: Int32) -> String {
        "\(String(cString: sqlite3_errstr(code))), code \(code)"
    }
}
