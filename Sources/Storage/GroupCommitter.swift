import Dispatch
import FoundationEssentials
import Platform

/// Group commit: write jobs from many threads share one transaction, so one fsync
/// (`synchronous=FULL`) covers a whole batch. Leader/follower, no thread of its own: a caller
/// that finds no leader becomes it; others queue and sleep on their own semaphore (no
/// thundering herd). The leader takes up to `maxBatch` queued jobs (its own first), runs them in
/// one `BEGIN IMMEDIATE` ... `COMMIT` (when one throws: again, each inside its own SAVEPOINT, so
/// a job that throws is rolled back alone and the others commit), wakes each member with
/// its result, and hands leadership to the oldest waiting job. A caller returns only after the
/// transaction holding its job has committed, so an answer always means durable.
/// `maxBatch == 1` is one transaction per job. A job may be marked not `durable` (see
/// `Database.write(durable:)`): a batch of only such jobs commits without waiting for the disk;
/// one durable member makes the whole batch wait for it.
/// For SQLite only: on PostgreSQL a shared transaction would let one conflict sink its batch.
public final class GroupCommitter: @unchecked Sendable {
    private final class Job {
        let body: (Connection) throws -> Any
        let durable: Bool
        let wake = DispatchSemaphore(value: 0)
        var outcome: Result<Any, Error>?  // set by the leader while it runs the batch
        var result: Result<Any, Error>?  // published under `lock` after the commit
        init(durable: Bool, _ body: @escaping (Connection) throws -> Any) {
            self.durable = durable
            self.body = body
        }
    }

    public let database: any SQLDatabase
    public let maxBatch: Int
    private let lock = Lock()
    // Guarded by `lock`.
    private var queue: [Job] = []
    private var leaderActive = false
    private var batchCount = 0
    private var jobCount = 0
    private var retriedCount = 0

    public init(database: any SQLDatabase, maxBatch: Int) {
        precondition(maxBatch >= 1, "maxBatch must be at least 1")
        self.database = database
        self.maxBatch = maxBatch
    }

    /// Runs `body` inside a write transaction shared with other callers and returns its value
    /// once committed. Throws what `body` threw (its writes undone), or the commit's error.
    /// `durable` false: the write may skip the wait for the disk (only when its whole batch may).
    @discardableResult
    public func write<T>(durable: Bool = true, _ body: @escaping (Connection) throws -> T) throws -> T {
        let job = Job(durable: durable) { connection in try body(connection) }
        lock.lock()
        queue.append(job)
        let leads = !leaderActive
        leaderActive = true
        lock.unlock()
        if !leads {
            job.wake.wait()  // woken with a result, or to lead (our job is then first in the queue)
        }
        lock.lock()
        let hasResult = job.result != nil
        lock.unlock()
        if !hasResult { lead() }
        // Safe: the job was built from `body`, whose result is a `T`.
        return try job.result!.get() as! T
    }

    /// Runs one batch (the leader's own job first), publishes results, passes leadership on.
    private func lead() {
        lock.lock()
        let batch = Array(queue.prefix(maxBatch))
        queue.removeFirst(batch.count)
        lock.unlock()
        let commitError = run(batch)
        lock.lock()
        for member in batch { member.result = commitError.map { .failure($0) } ?? member.outcome }
        batchCount += 1
        jobCount += batch.count
        let next = queue.first
        if next == nil { leaderActive = false }
        lock.unlock()
        for member in batch.dropFirst() { member.wake.signal() }
        next?.wake.signal()
    }

    /// Batches run a second time, with a savepoint per job, because one of their jobs threw.
    public var batchesRetriedWithSavepoints: Int {
        lock.lock()
        defer { lock.unlock() }
        return retriedCount
    }

    /// Writes waiting for the running batch to commit (they go in the next one).
    public var queuedJobs: Int {
        lock.lock()
        defer { lock.unlock() }
        return queue.count
    }

    /// (batches, jobs) committed so far: jobs / batches is the mean group size.
    public var statistics: (batches: Int, jobs: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (batchCount, jobCount)
    }

    /// Runs one batch; returns the error that sank the whole transaction, if any.
    /// First with no savepoints: SQLite copies each page a job changes into its savepoint's
    /// journal, which cost a tenth of a verification start + check. A job rarely throws (a
    /// refusal is an answer, written like any other), so when one does, the attempt rolls back
    /// whole and the batch runs again with a savepoint per job, undoing only that job's writes.
    /// A body may thus run twice: `SQLDatabase` already asks bodies to change nothing outside
    /// the database (PostgreSQL runs one again after a serialization failure).
    private func run(_ batch: [Job]) -> Error? {
        let durable = batch.contains { $0.durable }
        do {
            try database.write(durable: durable) { connection in
                for job in batch {
                    do {
                        job.outcome = .success(try job.body(connection))
                    } catch {
                        job.outcome = .failure(error)
                        // Alone in its transaction, its error is the transaction's.
                        throw batch.count == 1 ? error : AJobFailed()
                    }
                }
            }
            return nil
        } catch is AJobFailed {
            lock.lock()
            retriedCount += 1
            lock.unlock()
            return runWithSavepoints(batch, durable: durable)
        } catch {
            return error
        }
    }

    private struct AJobFailed: Error {}

    private func runWithSavepoints(_ batch: [Job], durable: Bool) -> Error? {
        do {
            try database.write(durable: durable) { connection in
                // `run`, not `execute`: cached statements, not SQL parsed again for every job.
                for job in batch {
                    try connection.run("SAVEPOINT job")
                    do {
                        job.outcome = .success(try job.body(connection))
                        try connection.run("RELEASE SAVEPOINT job")
                    } catch {
                        job.outcome = .failure(error)
                        try connection.run("ROLLBACK TO SAVEPOINT job")
                        try connection.run("RELEASE SAVEPOINT job")
                    }
                }
            }
            return nil
        } catch {
            return error
        }
    }
}
