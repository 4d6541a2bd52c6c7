import Foundation
import Storage

/// Group commit: write jobs from many threads share one transaction, so one fsync
/// (`synchronous=FULL`) covers a whole batch. Leader/follower, no thread of its own: the
/// first waiting caller that finds no leader takes up to `maxBatch` queued jobs, runs them in
/// one `BEGIN IMMEDIATE` ... `COMMIT`, each inside its own SAVEPOINT (a job that throws is
/// rolled back alone, the others commit), then hands every job its result. A caller returns
/// only after the transaction holding its job has committed, so an answer always means durable.
/// `maxBatch == 1` is one transaction per job (no grouping), for measurement.
final class GroupCommitter: @unchecked Sendable {
    private final class Job {
        let body: (Connection) throws -> Any
        var outcome: Result<Any, Error>?  // set by the leader while it runs the batch
        var result: Result<Any, Error>?  // published under `condition` after the commit
        init(_ body: @escaping (Connection) throws -> Any) { self.body = body }
    }

    let database: Database
    let maxBatch: Int
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var queue: [Job] = []
    private var leaderActive = false
    private(set) var batchCount = 0
    private(set) var jobCount = 0

    init(database: Database, maxBatch: Int) {
        precondition(maxBatch >= 1, "maxBatch must be at least 1")
        self.database = database
        self.maxBatch = maxBatch
    }

    /// Runs `body` inside a write transaction shared with other callers and returns its value
    /// once committed. Throws what `body` threw (its writes undone), or the commit's error.
    @discardableResult
    func write<T>(_ body: @escaping (Connection) throws -> T) throws -> T {
        let job = Job { connection in try body(connection) }
        condition.lock()
        queue.append(job)
        while job.result == nil {
            if leaderActive {
                condition.wait()
                continue
            }
            leaderActive = true
            let batch = Array(queue.prefix(maxBatch))
            queue.removeFirst(batch.count)
            condition.unlock()
            let commitError = run(batch)
            condition.lock()
            for member in batch { member.result = commitError.map { .failure($0) } ?? member.outcome }
            batchCount += 1
            jobCount += batch.count
            leaderActive = false
            condition.broadcast()
        }
        condition.unlock()
        // Safe: the job was built from `body`, whose result is a `T`.
        return try job.result!.get() as! T
    }

    /// (batches, jobs) committed so far: jobs / batches is the mean group size.
    var statistics: (batches: Int, jobs: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (batchCount, jobCount)
    }

    /// Runs one batch; returns the error that sank the whole transaction, if any.
    private func run(_ batch: [Job]) -> Error? {
        do {
            try database.write { connection in
                for job in batch {
                    try connection.execute("SAVEPOINT job")
                    do {
                        job.outcome = .success(try job.body(connection))
                        try connection.execute("RELEASE SAVEPOINT job")
                    } catch {
                        job.outcome = .failure(error)
                        try connection.execute("ROLLBACK TO SAVEPOINT job")
                        try connection.execute("RELEASE SAVEPOINT job")
                    }
                }
            }
            return nil
        } catch {
            return error
        }
    }
}
