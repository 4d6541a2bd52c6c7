import Foundation
import Storage

/// How the ledger's write transactions reach the database. SQLite: `GroupCommitter`, many
/// writes sharing one transaction and one fsync. PostgreSQL: `TransactionPerWrite`, each write
/// its own SERIALIZABLE transaction (retried on conflict by the database layer), since the
/// server already groups concurrent commits into one WAL flush and a shared transaction would
/// let one conflict sink every write batched with it.
protocol LedgerWriter: Sendable {
    /// `durable` false: the commit may skip the wait for the disk (`Database.write(durable:)`).
    @discardableResult
    func write<T>(durable: Bool, _ body: @escaping (Connection) throws -> T) throws -> T
    /// (transactions, writes) committed so far, for metrics.
    var statistics: (batches: Int, jobs: Int) { get }
}

extension GroupCommitter: LedgerWriter {}

extension LedgerWriter {
    @discardableResult
    func write<T>(_ body: @escaping (Connection) throws -> T) throws -> T { try write(durable: true, body) }
}

final class TransactionPerWrite: LedgerWriter, @unchecked Sendable {
    let database: any SQLDatabase
    private let lock = NSLock()
    private var count = 0  // guarded by `lock`

    init(database: any SQLDatabase) { self.database = database }

    /// Every write waits for the server's commit: PostgreSQL already groups concurrent ones.
    @discardableResult
    func write<T>(durable: Bool, _ body: @escaping (Connection) throws -> T) throws -> T {
        let value = try database.write(body)
        lock.lock()
        count += 1
        lock.unlock()
        return value
    }

    var statistics: (batches: Int, jobs: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (count, count)
    }
}
