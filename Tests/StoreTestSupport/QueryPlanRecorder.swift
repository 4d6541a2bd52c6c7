import Foundation
import Storage

/// What SQLite planned for one statement a store ran: the statement and the plan's lines
/// (`EXPLAIN QUERY PLAN`), e.g. "SEARCH send_log USING PRIMARY KEY (key=? AND seq=?)".
public struct StatementPlan: Sendable, CustomStringConvertible {
    public let sql: String
    public let details: [String]

    /// Lines that read a whole table or index ("SCAN t"; a constant row or a list of values is no scan).
    public var scans: [String] {
        details.filter { $0.hasPrefix("SCAN") && !$0.hasPrefix("SCAN CONSTANT ROW") && !$0.contains("VALUES") }
    }

    /// Lines that sort the rows found (their cost grows with how many match, not with the LIMIT).
    public var sorts: [String] { details.filter { $0.contains("TEMP B-TREE") } }

    /// Whether the statement touches `table` (as a word in its text).
    public func touches(_ table: String) -> Bool {
        sql.range(of: "\\b\(table)\\b", options: .regularExpression) != nil
    }

    public var description: String { "\(sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")) -> \(details)" }
}

/// A SQLite database that records the plan of every statement run through it, so a test can
/// say how a hot path reads (an index search, not a scan of a table that grows with history)
/// without timing anything. Statements run as they would; the plan is asked with the same bindings.
public final class QueryPlanRecorder: SQLDatabase, @unchecked Sendable {
    public let database: Database
    private let lock = NSLock()
    private var recorded: [StatementPlan] = []

    public init(_ database: Database) { self.database = database }

    public var dialect: SQLDialect { database.dialect }

    public func write<T>(_ body: (Connection) throws -> T) throws -> T {
        try database.write { connection in try body(RecordingConnection(inner: connection, recorder: self)) }
    }

    public func read<T>(_ body: (Connection) throws -> T) throws -> T {
        try database.read { connection in try body(RecordingConnection(inner: connection, recorder: self)) }
    }

    public func schemaVersion() throws -> Int { try database.schemaVersion() }

    /// The plans recorded since the last call, oldest first.
    public func take() -> [StatementPlan] {
        lock.lock()
        defer { lock.unlock() }
        let plans = recorded
        recorded = []
        return plans
    }

    fileprivate func record(_ plan: StatementPlan) {
        lock.lock()
        recorded.append(plan)
        lock.unlock()
    }
}

private final class RecordingConnection: SQLConnection {
    let inner: Connection
    let recorder: QueryPlanRecorder

    init(inner: Connection, recorder: QueryPlanRecorder) {
        self.inner = inner
        self.recorder = recorder
    }

    var dialect: SQLDialect { inner.dialect }

    func execute(_ sql: String) throws(StorageError) { try inner.execute(sql) }

    func run(_ sql: String, _ bindings: [SQLValue]) throws(StorageError) -> Int {
        try explain(sql, bindings)
        return try inner.run(sql, bindings)
    }

    func query(_ sql: String, _ bindings: [SQLValue]) throws(StorageError) -> [Row] {
        try explain(sql, bindings)
        return try inner.query(sql, bindings)
    }

    private func explain(_ sql: String, _ bindings: [SQLValue]) throws(StorageError) {
        let rows = try inner.query("EXPLAIN QUERY PLAN " + sql, bindings)
        var details: [String] = []
        for row in rows { details.append(try row.string("detail")) }
        recorder.record(StatementPlan(sql: sql, details: details))
    }
}
