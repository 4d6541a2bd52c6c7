import FoundationEssentials
import Secrets
import ServiceKit
import Storage

/// `bench postgres --postgres URL`: the stack on PostgreSQL, each row next to its ceiling from
/// the same run: logins with 1 and then 2 identity replicas next to the scrypt rate of this
/// machine, and confirmed transfers next to the bare commit rate of single-row updates on the
/// same server. Every stack gets a fresh database of its own on that server, dropped after.
enum PostgresBench {
    static func run(settings: BenchSettings, url: String?, report: BenchReport) throws {
        guard let url, !url.isEmpty else {
            throw ConfigurationError("bench postgres needs --postgres URL: a server where the bench may create and drop databases")
        }
        let commit = try commitRate(url: url, settings: settings)
        report.ceiling("postgres single-row update commits (c=\(settings.connections))", perSecond: commit)
        for identityReplicas in [1, 2] {
            try withStack(url: url, settings: settings, replicas: ["identity": identityReplicas]) { environment in
                try LoginBench.run(environment, report: report, label: "login on postgres, \(identityReplicas) identity replica(s)")
            }
        }
        try withStack(url: url, settings: settings, replicas: [:]) { environment in
            try TransferBench.run(environment, report: report, commitCeiling: commit)
        }
    }

    /// A stack on a fresh database of `url`'s server, its replicas sharing the keys they must.
    private static func withStack(url: String, settings: BenchSettings, replicas: [String: Int], _ body: (BenchEnvironment) throws -> Void) throws {
        let name = "latchkey_bench_" + Hex.encode(SecureRandom.bytes(4))
        try PostgresAdmin.execute(url: url, "CREATE DATABASE \(name)")
        defer { try? PostgresAdmin.execute(url: url, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
        let environment = BenchEnvironment(settings: settings, explicitGateway: nil) { options in
            options.environment[CommonOptions.databaseURL.environmentName] = PostgresAdmin.url(url, database: name)
            for variable in ["LATCHKEY_IDENTITY_KEY", "LATCHKEY_VERIFICATION_KEY", "LATCHKEY_RESET_KEY", "LATCHKEY_ACCOUNTS_KEY"] {
                options.environment[variable] = Hex.encode(SecureRandom.bytes(32))
            }
            options.replicas = replicas
        }
        defer { environment.shutdown() }
        try body(environment)
    }

    /// Closed-loop `UPDATE ... SET n = n + 1` transactions, one row per connection (no conflicts):
    /// what one durable commit costs on this server, the floor of every booking.
    private static func commitRate(url: String, settings: BenchSettings) throws -> Double {
        let schema = "bench_probe_" + String((0..<8).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement()! })
        var options = PostgresOptions()
        options.poolSize = settings.connections
        let database = try PostgresDatabase(
            url: url, schema: schema,
            migrations: [Migration(version: 1, name: "probe", sql: "CREATE TABLE probe (id BIGINT PRIMARY KEY, n BIGINT NOT NULL)")],
            options: options)
        defer { _ = try? database.write { try $0.execute("DROP SCHEMA \(schema) CASCADE") } }
        _ = try database.write { c in
            for row in 0..<settings.connections { try c.run("INSERT INTO probe (id, n) VALUES (?, 0)", [.integer(Int64(row))]) }
        }
        let result = try LoadGenerator.closedLoop(settings: settings, prepare: { index in index }) { row, _ in
            _ = try database.write { c in try c.run("UPDATE probe SET n = n + 1 WHERE id = ?", [.integer(Int64(row))]) }
        }
        return result.perSecond
    }
}
