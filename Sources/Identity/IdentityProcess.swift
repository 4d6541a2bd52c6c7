import LineProtocol
import ServiceKit
import Storage

/// Builds the identity service from configuration and serves until SIGTERM.
public enum IdentityProcess {
    public static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
        let host = try ServiceHost(
            name: "identity", defaultPort: 7401, arguments: arguments, environment: environment, extraOptions: IdentityOptions.all)
        var settings = try IdentityOptions.settings(from: host.configuration)
        settings.serverKey = try ServerKeyFile.load(
            path: try host.dataFile("identity.key"), configured: host.configuration.string(IdentityOptions.key), option: "--identity-key")
        let store = IdentityStore(database: try host.openDatabase(
            sqliteFile: "identity.sqlite", sqlite: IdentityMigrations.sqlite, postgres: IdentityMigrations.postgres))
        let service = try IdentityService(store: store, settings: settings, metrics: host.metrics)
        IdentityMethods.register(on: host.router, service: service)
        host.logger.info("identity configured", [
            "scrypt.log_n": .int(Int64(settings.scrypt.logN)), "session.lifetime_s": .int(settings.sessionLifetimeSeconds),
            "session.idle_s": .int(settings.sessionIdleSeconds), "password.breached_entries": .int(Int64(settings.policy.breached.count)),
        ])
        return host.run()
    }
}
