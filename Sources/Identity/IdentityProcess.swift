import Delivery
import LineProtocol
import ServiceKit
import Storage

/// Builds the identity service from configuration and serves until SIGTERM.
public enum IdentityProcess {
    public static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
        let host = try ServiceHost(
            name: "identity", defaultPort: 7401, arguments: arguments, environment: environment,
            extraOptions: IdentityOptions.all + DeliveryOptions.all + SMTPOptions.all)
        var settings = try IdentityOptions.settings(from: host.configuration)
        let database = try host.openDatabase(sqliteFile: "identity.sqlite", sqlite: IdentityMigrations.sqlite, postgres: IdentityMigrations.postgres)
        // Authenticator secrets are sealed under this key: replicas with a key file each could
        // not open one another's (a user's TOTP would pass on one replica and fail on the next).
        settings.serverKey = try ServerKeyFile.load(
            path: try host.dataFile("identity.key"), configured: host.configuration.string(IdentityOptions.key), option: "--identity-key",
            shared: database.dialect == .postgres, service: "identity",
            consequence: "a key file per replica could not open the others' authenticator secrets")
        let store = IdentityStore(database: database)
        let service = try IdentityService(store: store, settings: settings, metrics: host.metrics, notices: try notices(host))
        IdentityMethods.register(on: host.router, service: service)
        // Last mails of deletions whose sender stopped before sending them.
        host.loop.scheduleRepeating(everyMilliseconds: 5000) { _ = host.workers.submit { service.sendLastMails() } }
        host.logger.info("identity configured", [
            "scrypt.log_n": .int(Int64(settings.scrypt.logN)), "session.lifetime_s": .int(settings.sessionLifetimeSeconds),
            "session.idle_s": .int(settings.sessionIdleSeconds), "password.breached_entries": .int(Int64(settings.policy.breached.count)),
        ])
        return host.run()
    }

    /// Account notices go out through the same e-mail provider as reset's mail (the outbox in
    /// development, SMTP with `--smtp-url`), on a worker thread after the answer's transaction.
    private static func notices(_ host: ServiceHost) throws -> UserNotices {
        let mail = try DeliveryOptions.emailProvider(host.configuration, logger: host.logger)
        let (workers, logger) = (host.workers, host.logger)
        return UserNotices { message in
            let accepted = workers.submit {
                do {
                    try mail.deliver(message)
                } catch {
                    logger.warning("account notice not sent", ["error": .string(String(describing: error))])
                }
            }
            if !accepted { logger.warning("account notice dropped: workers busy") }
        }
    }
}
