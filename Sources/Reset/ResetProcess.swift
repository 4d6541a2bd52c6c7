import Delivery
import FoundationEssentials
import Platform
import Runtime
import ServiceKit

/// Options of the reset service (documented in protocol/reset.md).
public enum ResetOptions {
    /// The link template: `--reset-link-template` when given; else the universal link when the
    /// HTTP door's public origin is configured (the path the app claims in
    /// apple-app-site-association); else the app's own scheme.
    public static func linkTemplate(_ configuration: Configuration) throws -> String {
        if configuration.isSet(linkTemplate) { return try configuration.requiredString(linkTemplate) }
        guard let base = try HTTPOptions.publicOrigin(configuration) else { return LinkTemplate.defaultTemplate }
        let firstPath = (configuration.string(HTTPOptions.aasaPaths) ?? "/reset*").split(separator: ",").first.map(String.init) ?? "/reset*"
        let path = String(firstPath.trimmingWhitespace().prefix { $0 != "*" && $0 != "?" })
        return "\(base)\(path)?token={token}"
    }

    public static let tokenTTLSeconds = ConfigOption("reset-token-ttl-s", default: "1800", help: "how long a reset link works, in seconds")
    public static let linkTemplate = ConfigOption(
        "reset-link-template", default: LinkTemplate.defaultTemplate,
        help: "the link mailed, with {token}: a deep link (latchkey://...) or a universal link (https://...)")
    public static let addressIntervalSeconds = ConfigOption("reset-address-interval-s", default: "60", help: "at most one request per e-mail address in this many seconds")
    public static let addressPerHour = ConfigOption("reset-address-per-hour", default: "5", help: "requests per e-mail address an hour")
    public static let clientPerHour = ConfigOption("reset-client-per-hour", default: "20", help: "requests per client address an hour")
    public static let notifyUnknown = ConfigOption("reset-notify-unknown", default: "false", help: "mail addresses without an account that someone asked")
    public static let productName = ConfigOption("reset-product-name", default: "Latchkey", help: "the product name in mails")
    public static let mailWorkers = ConfigOption("reset-mail-workers", default: "2", help: "threads doing lookups and sending mail after the answer")
    public static let mailQueue = ConfigOption(
        "reset-mail-queue", default: "1000", help: "jobs waiting in the durable queue before new requests are dropped (still answered ok)")
    public static let mailAttempts = ConfigOption(
        "reset-mail-attempts", default: "5", help: "tries per queued job on transient failures (identity down, mail server busy)")
    public static let mailBackoffMilliseconds = ConfigOption(
        "reset-mail-backoff-ms", default: "1000", help: "wait before a queued job's second try; doubles each time, at most 60 s")

    public static let key = ConfigOption(
        "reset-key",
        help: "server key for the keyed hashes of e-mail addresses in rate-limit records: 64+ hex digits or 32+ bytes of text (default: generated once into <data dir>/reset.key, mode 0600; with --database-url required, the same on every replica)")

    public static let all = [
        key, tokenTTLSeconds, linkTemplate, HTTPOptions.publicURL, HTTPOptions.aasaPaths, addressIntervalSeconds, addressPerHour, clientPerHour, notifyUnknown,
        productName, mailWorkers, mailQueue, mailAttempts, mailBackoffMilliseconds,
    ]

    public static func settings(_ configuration: Configuration) throws -> ResetSettings {
        var settings = ResetSettings()
        settings.tokenTTLSeconds = Int64(try configuration.int(tokenTTLSeconds, range: 1...86_400))
        settings.addressIntervalSeconds = Int64(try configuration.int(addressIntervalSeconds, range: 1...86_400))
        settings.addressPerHour = try configuration.int(addressPerHour, range: 1...10_000)
        settings.clientPerHour = try configuration.int(clientPerHour, range: 1...1_000_000)
        settings.notifyUnknownAddresses = try configuration.bool(notifyUnknown)
        settings.maxQueuedJobs = try configuration.int(mailQueue, range: 1...1_000_000)
        settings.jobAttempts = try configuration.int(mailAttempts, range: 1...20)
        settings.jobBackoffMilliseconds = Int64(try configuration.int(mailBackoffMilliseconds, range: 0...60_000))
        return settings
    }
}

/// Builds the reset service from configuration and serves until SIGTERM.
public enum ResetProcess {
    public static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
        let host = try ServiceHost(
            name: "reset", defaultPort: 7404, arguments: arguments, environment: environment,
            extraOptions: ResetOptions.all + DeliveryOptions.all + SMTPOptions.all + [ErasureFollower.pollMilliseconds])
        let configuration = host.configuration
        let settings = try ResetOptions.settings(configuration)
        let composer = ResetMailComposer(
            productName: configuration.string(ResetOptions.productName) ?? "Latchkey",
            linkTemplate: try LinkTemplate(ResetOptions.linkTemplate(configuration)))
        let database = try host.openDatabase(
            sqliteFile: "reset.sqlite", sqlite: ResetMigrations.sqlite, postgres: ResetMigrations.postgres, sqliteOptions: SQLResetStore.sqliteOptions)
        let store = SQLResetStore(database: database)
        // Replicas name an address by the same key or count it apart; the key stays out of the
        // database, so a copy of the records alone cannot test addresses against them.
        let subjects = ResetSubject(key: try ServerKeyFile.load(
            path: try host.dataFile("reset.key"), configured: configuration.string(ResetOptions.key), option: "--reset-key",
            shared: database.dialect == .postgres, service: "reset",
            consequence: "a key file per replica would give each replica its own per-address limits"))
        let identity = RPCIdentityDirectory(client: try host.client(for: "identity", option: CommonOptions.identity))
        // Work after the answer has its own loop and identity client: on SIGTERM the server's loop
        // stops once answers are out, and mails already promised must still be looked up and sent.
        let backgroundLoop = try EventLoop()
        let backgroundIdentity = RPCIdentityDirectory(client: try host.makeClient(for: "identity", option: CommonOptions.identity, loop: backgroundLoop))
        let backgroundLoopThread = JoinableThread(name: "reset-loop") { backgroundLoop.run() }
        let mail = try DeliveryOptions.emailProvider(configuration, logger: host.logger)
        let service = ResetService(
            settings: settings, store: store, subjects: subjects, identity: identity, mail: mail, composer: composer,
            metrics: host.metrics, logger: host.logger, backgroundIdentity: backgroundIdentity)
        try service.requeueInterruptedJobs()
        let mailWorkers = DeliveryWorkers(
            workerCount: try configuration.int(ResetOptions.mailWorkers, range: 1...64), name: "reset-mail", logger: host.logger
        ) { DeliveryPass(handled: service.runNextJob()) }
        service.jobQueued.onQueued { [weak mailWorkers] in mailWorkers?.wake() }
        // Jobs left by an earlier run, and retries that fall due.
        mailWorkers.wake()
        host.loop.scheduleRepeating(everyMilliseconds: 500) { mailWorkers.wake() }
        service.register(on: host.router)
        try ErasureFollower(service: "reset", identity: identity, logger: host.logger) { erasure in
            _ = try store.eraseUser(userID: erasure.userID, email: erasure.email)
            return .done
        }.start(on: host)
        host.loop.scheduleRepeating(everyMilliseconds: 600_000) {
            host.workers.submit {
                let now = WallClock.nowMilliseconds()
                try? store.prune(requestsBefore: now - 7_200_000, tokensEndedBefore: now - 86_400_000)
            }
        }
        host.logger.info("reset configured", [
            "delivery.provider": .string(mail.name), "reset.token_ttl_s": .int(settings.tokenTTLSeconds),
            "reset.notify_unknown": .bool(settings.notifyUnknownAddresses),
        ])
        let status = host.run()
        // Requests were answered `ok` before their mail went out: finish what is due (their
        // identity calls need the background loop, so it stops last), then join every thread;
        // what is left stays queued for the next start.
        let deadline = MonotonicClock.nowMilliseconds() + Int64(try configuration.int(CommonOptions.drainTimeoutMilliseconds, range: 0...600_000))
        guard mailWorkers.stop(deadlineMilliseconds: deadline) else {
            host.exitWithoutCleanup(reason: "reset mail work still running past the drain deadline", pool: mailWorkers.threads)
        }
        backgroundLoop.stop()
        backgroundLoopThread.join()
        return status
    }
}
