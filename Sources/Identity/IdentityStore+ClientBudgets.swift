import Storage

/// Per-address token buckets in the database, so every replica on one PostgreSQL spends from
/// the same bucket: the read, the decision and the write are one SERIALIZABLE transaction.
public final class StoredClientBudget: ClientBudget {
    /// Which budget (`login`, `challenge`): one table holds them all.
    public let name: String
    public let bucket: TokenBucket
    private let store: IdentityStore

    public init(store: IdentityStore, name: String, burst: Int, refillPerMinute: Int) {
        self.store = store
        self.name = name
        bucket = TokenBucket(burst: burst, refillPerMinute: refillPerMinute)
    }

    public func reserve(address: String, now: Double) throws -> Int64? {
        try store.reserveClientToken(budget: name, address: address, bucket: bucket, now: now)
    }

    public func refund(address: String, now: Double) throws {
        try store.refundClientToken(budget: name, address: address, bucket: bucket, now: now)
    }
}

extension IdentityStore {
    /// Spends one token of `address`'s bucket: nil when spent, else the seconds to wait.
    func reserveClientToken(budget: String, address: String, bucket: TokenBucket, now: Double) throws -> Int64? {
        try database.write { c in
            let state = try Self.bucketState(c, budget: budget, address: address)
            switch bucket.reserve(state, now: now) {
            case .failure(let wait):
                return wait.seconds
            case .success(let spent):
                // A new address drops the full buckets of this budget: the table holds only
                // addresses seen within `secondsToFill`.
                if state == nil {
                    try c.run("DELETE FROM client_budgets WHERE budget = ? AND updated_at < ?", [.text(budget), .real(now - bucket.secondsToFill)])
                }
                try Self.save(c, budget: budget, address: address, spent)
                return nil
            }
        }
    }

    func refundClientToken(budget: String, address: String, bucket: TokenBucket, now: Double) throws {
        try database.write { c in
            guard let state = try Self.bucketState(c, budget: budget, address: address) else { return }
            try Self.save(c, budget: budget, address: address, bucket.refund(state, now: now))
        }
    }

    private static func bucketState(_ c: Connection, budget: String, address: String) throws -> TokenBucket.State? {
        try c.queryOne("SELECT tokens, updated_at FROM client_budgets WHERE budget = ? AND address = ?", [.text(budget), .text(address)]).map { row in
            TokenBucket.State(tokens: try row.double("tokens"), updatedAt: try row.double("updated_at"))
        }
    }

    private static func save(_ c: Connection, budget: String, address: String, _ state: TokenBucket.State) throws {
        try c.run(
            """
            INSERT INTO client_budgets (budget, address, tokens, updated_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (budget, address) DO UPDATE SET tokens = excluded.tokens, updated_at = excluded.updated_at
            """,
            [.text(budget), .text(address), .real(state.tokens), .real(state.updatedAt)])
    }
}
