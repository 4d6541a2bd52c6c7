/// What a store needs inside one transaction, on SQLite or on PostgreSQL: statements with `?`
/// bindings (never values spliced into SQL text) and rows read by column name. A store written
/// against this runs on both backends; only its migrations are written per dialect.
public protocol SQLConnection: AnyObject {
    var dialect: SQLDialect { get }
    /// Runs one or more statements without bindings (migrations). Not for values.
    func execute(_ sql: String) throws(StorageError)
    /// Runs one statement with `?` bindings; returns the number of rows it changed.
    @discardableResult
    func run(_ sql: String, _ bindings: [SQLValue]) throws(StorageError) -> Int
    /// Runs one statement with `?` bindings and returns every row.
    func query(_ sql: String, _ bindings: [SQLValue]) throws(StorageError) -> [Row]
}

extension SQLConnection {
    @discardableResult
    public func run(_ sql: String) throws(StorageError) -> Int { try run(sql, []) }

    public func query(_ sql: String) throws(StorageError) -> [Row] { try query(sql, []) }

    /// The first row, or nil. Add `LIMIT 1` when more rows could match.
    public func queryOne(_ sql: String, _ bindings: [SQLValue] = []) throws(StorageError) -> Row? {
        try query(sql, bindings).first
    }
}

/// The connection a transaction body receives, whatever the backend.
public typealias Connection = any SQLConnection

public enum SQLDialect: String, Sendable {
    case sqlite
    case postgres
}

/// A service's database: transactions that commit whole or not at all. `write` bodies see and
/// make changes as if no other writer ran at the same time (SQLite: one writer at a time;
/// PostgreSQL: SERIALIZABLE, and the body runs again after a serialization failure, so it must
/// have no effect outside the database). `read` bodies see one consistent snapshot.
public protocol SQLDatabase: AnyObject, Sendable {
    var dialect: SQLDialect { get }
    func write<T>(_ body: (Connection) throws -> T) throws -> T
    /// `write`, but with `durable` false the commit may skip the wait for the disk: only for writes
    /// whose loss nobody was told about, or whose loss only repeats work (see `Database`).
    func write<T>(durable: Bool, _ body: (Connection) throws -> T) throws -> T
    func read<T>(_ body: (Connection) throws -> T) throws -> T
    /// The highest applied migration version (0 for none).
    func schemaVersion() throws -> Int
}

extension SQLDatabase {
    /// Every write commits durably unless the backend can do otherwise (PostgreSQL: the server
    /// already groups concurrent commits, so there is nothing to save).
    public func write<T>(durable: Bool, _ body: (Connection) throws -> T) throws -> T { try write(body) }
}
