import Storage

/// Work promised by an answer and done after it, kept in reset's own database so a stop or a
/// kill -9 does not lose it: the lookup, token and mail of a `reset.request`, and the audit
/// record and notice mail of a completed reset. Deleted once done or given up.
public struct ResetJob: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// `address`: look it up, issue a token, mail the link (or the unknown-address notice).
        case resetLink = "reset_link"
        /// `userID`: record the audit event, mail "your password was changed".
        case passwordChanged = "password_changed"
    }

    public var id: Int64 = 0
    public var kind: Kind
    /// The normalized address asked for (a `resetLink` job only; gone with the job).
    public var address: String?
    public var userID: String?
    public var client: String?
    /// The id of the request that queued it, to follow it through the logs.
    public var requestID: String
    /// Tries begun so far, the one under way included.
    public var attempts = 0
    /// A `passwordChanged` job: the second factors identity removed with the reset (its mail
    /// lists them), comma-separated.
    public var removedFactors: [String] = []

    public init(kind: Kind, address: String? = nil, userID: String? = nil, client: String?, requestID: String) {
        precondition((kind == .resetLink) == (address != nil) && (kind == .passwordChanged) == (userID != nil))
        self.kind = kind
        self.address = address
        self.userID = userID
        self.client = client
        self.requestID = requestID
    }
}

/// What became of a request offered to the queue.
public enum JobAdmission: Sendable, Equatable {
    case queued
    /// A rate rule refused it: nothing recorded, nothing queued.
    case refused(RateRule)
    /// The queue holds `maxQueued` jobs already.
    case full
}

/// The job queue's operations, each one transaction.
public protocol ResetJobQueue: Sendable {
    /// Checks the rate rules and the queue's size, then records the request against each rule and
    /// queues its job, all in one transaction (so a job is never admitted twice, even if run twice).
    func admitAndQueue(_ rules: [RateRule], _ job: ResetJob, maxQueued: Int, nowMilliseconds: Int64) throws -> JobAdmission
    /// Takes the oldest due job, or a running one whose lease has ended (its replica died):
    /// marks it running until `leaseUntilMilliseconds` and counts the try. One transaction,
    /// so one claimer gets a job however many replicas ask at once.
    func claimDueJob(nowMilliseconds: Int64, leaseUntilMilliseconds: Int64) throws -> ResetJob?
    func retryJob(id: Int64, at: Int64) throws
    func removeJob(id: Int64) throws
    /// After a restart: jobs a dead process was running go back to the queue. Returns how many.
    /// Only on SQLite, where this process is the file's only user; on PostgreSQL another
    /// replica may be running them, so their leases decide.
    func requeueInterruptedJobs() throws -> Int
}

extension SQLResetStore {
    public func admitAndQueue(_ rules: [RateRule], _ job: ResetJob, maxQueued: Int, nowMilliseconds now: Int64) throws -> JobAdmission {
        precondition(maxQueued > 0)
        return try database.write { c in
            if let refused = try Self.firstRefusal(c, rules, nowMilliseconds: now) { return .refused(refused) }
            guard try c.queryOne("SELECT COUNT(*) AS n FROM reset_jobs")?.int("n") ?? 0 < Int64(maxQueued) else { return .full }
            try Self.record(c, rules, nowMilliseconds: now)
            try c.run(
                """
                INSERT INTO reset_jobs (kind, address, user_id, client, request_id, next_attempt_at_ms, created_at_ms, removed_factors)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [.text(job.kind.rawValue), SQLValue(job.address), SQLValue(job.userID), SQLValue(job.client), .text(job.requestID), .integer(now), .integer(now),
                 .text(job.removedFactors.joined(separator: ","))])
            return .queued
        }
    }

    public func claimDueJob(nowMilliseconds now: Int64, leaseUntilMilliseconds: Int64) throws -> ResetJob? {
        precondition(leaseUntilMilliseconds > now)
        return try database.write { c in
            guard let row = try c.queryOne(
                """
                SELECT job_id, kind, address, user_id, client, request_id, attempts, removed_factors FROM reset_jobs
                WHERE (running = 0 AND next_attempt_at_ms <= ?) OR (running = 1 AND lease_until_ms <= ?)
                ORDER BY next_attempt_at_ms LIMIT 1
                """, [.integer(now), .integer(now)])
            else { return nil }
            guard let kind = ResetJob.Kind(rawValue: try row.string("kind")) else { throw StorageError.misuse("unreadable reset job row") }
            var job = ResetJob(
                kind: kind, address: try row.optionalString("address"), userID: try row.optionalString("user_id"),
                client: try row.optionalString("client"), requestID: try row.string("request_id"))
            job.id = try row.int("job_id")
            job.attempts = Int(try row.int("attempts")) + 1
            job.removedFactors = try row.string("removed_factors").split(separator: ",").map(String.init)
            try c.run("UPDATE reset_jobs SET running = 1, attempts = ?, lease_until_ms = ? WHERE job_id = ?",
                      [SQLValue(job.attempts), .integer(leaseUntilMilliseconds), .integer(job.id)])
            return job
        }
    }

    public func retryJob(id: Int64, at: Int64) throws {
        try database.write { c in _ = try c.run("UPDATE reset_jobs SET running = 0, next_attempt_at_ms = ? WHERE job_id = ?", [.integer(at), .integer(id)]) }
    }

    public func removeJob(id: Int64) throws {
        try database.write { c in _ = try c.run("DELETE FROM reset_jobs WHERE job_id = ?", [.integer(id)]) }
    }

    public func requeueInterruptedJobs() throws -> Int {
        guard database.dialect == .sqlite else { return 0 }
        return try database.write { c in try c.run("UPDATE reset_jobs SET running = 0 WHERE running = 1") }
    }
}
