import Delivery
import LineProtocol
import Platform
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
        let mailQueue = MailQueue(database: database, serverKey: settings.serverKey, clock: .system)
        let mailWorkers = try mailWorkers(host, queue: mailQueue)
        let service = try IdentityService(store: store, settings: settings, metrics: host.metrics, notices: notices(host, queue: mailQueue, workers: mailWorkers))
        IdentityMethods.register(on: host.router, service: service)
        // Last mails of deletions whose sender stopped before sending them.
        host.loop.scheduleRepeating(everyMilliseconds: 5000) { _ = host.workers.submit { service.sendLastMails() } }
        host.logger.info("identity configured", [
            "scrypt.log_n": .int(Int64(settings.scrypt.logN)), "session.lifetime_s": .int(settings.sessionLifetimeSeconds),
            "session.idle_s": .int(settings.sessionIdleSeconds), "password.breached_entries": .int(Int64(settings.policy.breached.count)),
        ])
        let status = host.run()
        // Mails queued before the stop go out now if they can; the rest wait in the queue.
        let deadline = MonotonicClock.nowMilliseconds() + Int64(try host.configuration.int(CommonOptions.drainTimeoutMilliseconds, range: 0...600_000))
        guard mailWorkers.stop(deadlineMilliseconds: deadline) else {
            host.exitWithoutCleanup(reason: "identity mail work still running past the drain deadline", pool: mailWorkers.threads)
        }
        return status
    }

    /// Account mails go out through the same e-mail provider as reset's (the outbox in
    /// development, SMTP with `--smtp-url`): queued in the request's thread, before its answer,
    /// and sent by mail workers of their own, retried while the provider fails.
    private static func notices(_ host: ServiceHost, queue: MailQueue, workers: DeliveryWorkers) -> UserNotices {
        let logger = host.logger
        return UserNotices { message in
            do {
                try queue.enqueue(message)
                workers.wake()
            } catch {
                logger.warning("account mail not queued", ["error": .string(String(describing: error))])
            }
        }
    }

    private static func mailWorkers(_ host: ServiceHost, queue: MailQueue) throws -> DeliveryWorkers {
        let mail = try DeliveryOptions.emailProvider(host.configuration, logger: host.logger)
        let logger = host.logger
        let workers = DeliveryWorkers(workerCount: 2, name: "identity-mail", logger: logger) {
            do {
                let outcome = try queue.sendNext { message throws(DeliveryError) in try mail.deliver(message) }
                if outcome == .givenUp { logger.error("account mail given up", ["delivery.provider": .string(mail.name)]) }
                return DeliveryPass(handled: outcome != .nothingDue)
            } catch {
                logger.warning("account mail queue failed", ["error": .string(String(describing: error))])
                return DeliveryPass(handled: false)
            }
        }
        // Mails left by an earlier run, and retries that fall due.
        workers.wake()
        host.loop.scheduleRepeating(everyMilliseconds: 1000) { workers.wake() }
        return workers
    }
}
