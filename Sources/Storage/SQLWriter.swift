import FoundationEssentials
import Platform

/// How a store's write transactions reach its database. SQLite: a `GroupCommitter`, many writes
/// sharing one transaction and one fsync. PostgreSQL (or grouping turned off): `TransactionPerWrite`,
/// each write its own transaction (SERIALIZABLE and retried on conflict on PostgreSQL), since the
/// server already groups concurrent commits into one WAL flush and a shared transaction would let
/// one conflict sink every write batched with it.
public protocol SQLWriter: Sendable {
    /// `durable` false: the commit may skip the wait for the disk (`SQLDatabase.write(durable:)`).
    @discardableResult
    func write<T>(durable: Bool, _ body: @escaping (Connection) throws -> T) throws -> T
    /// (transactions, writes) committed so far, for metrics.
    var statistics: (batches: Int, jobs: Int) { get }
    /// Writes waiting for a running batch to commit.
    var queuedJobs: Int { get }
}

extension SQLWriter {
    @discardableResult
    public func write<T>(_ body: @escaping (Connection) throws -> T) throws -> T { try write(durable: true, body) }
}

/// The writer for `database`: grouped on SQLite when `groupCommitMax` > 1, one transaction per
/// write otherwise.
public func makeSQLWriter(for database: any SQLDatabase, groupCommitMax: Int) -> any SQLWriter {
    database.dialect == .sqlite && groupCommitMax > 1
        ? GroupCommitter(database: database, maxBatch: groupCommitMax) : TransactionPerWrite(database: database)
}

extension GroupCommitter: SQLWriter {}

public final class TransactionPerWrite: SQLWriter, @unchecked Sendable {
    public let database: any SQLDatabase
    private let lock = Lock()
    private var count = 0  // guarded by `lock`

    public init(database: any SQLDatabase) { self.database = database }

    @discardableResult
    public func write<T>(durable: Bool, _ body: @escaping (Connection) throws -> T) throws -> T {
        let value = try database.write(durable: durable, body)
        lock.lock()
        count += 1
        lock.unlock()
        return value
    }

    public var statistics: (batches: Int, jobs: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (count, count)
    }

    public var queuedJobs: Int { 0 }
}
