import Delivery
import FoundationEssentials
import LineProtocol
import Platform
import ServiceKit
import Storage

/// Builds the verification service from configuration and serves until SIGTERM.
public enum VerificationProcess {
    public static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
        let host = try ServiceHost(
            name: "verification", defaultPort: 7402, arguments: arguments, environment: environment,
            extraOptions: VerificationOptions.all + DeliveryOptions.all + ProviderFactory.options + SMTPOptions.all + [ErasureFollower.pollMilliseconds])
        let configuration = host.configuration
        var settings = try VerificationSettings(replicaID: host.replicaID, configuration: configuration)
        // SQLite: replicas may share a volume (`docker compose --scale`), so each keeps its own
        // file, and the requests it starts are its own (their ids name it). PostgreSQL: one
        // schema for every replica, and any replica serves any request.
        let fileName = host.replicaID == "verification" ? "verification.sqlite" : "verification-\(host.replicaID).sqlite"
        let database = try host.openDatabase(sqliteFile: fileName, sqlite: VerificationSchema.sqlite, postgres: VerificationSchema.postgres)
        settings.requestIDsNameReplica = database.dialect == .sqlite
        let deliveryWorkers = try configuration.int(VerificationOptions.deliveryWorkers, range: 1...64)
        settings.delivery.handOffCapacity = deliveryWorkers
        let store = SQLVerificationStore(database: database)
        let key = try ServerKey.load(configuration: configuration, keyFile: try host.dataFile("verification.key"), shared: database.dialect == .postgres)
        let providers = try ProviderFactory.make(
            configuration: configuration, logger: host.logger,
            emailProvider: try DeliveryOptions.emailProvider(configuration, logger: host.logger))
        let service = VerificationService(settings: settings, store: store, providers: providers, key: key, metrics: host.metrics)
        let identity = RPCIdentityDirectory(client: try host.client(for: "identity", option: CommonOptions.identity))
        VerificationMethods(service: service, identity: identity).register(on: host.router)
        try ErasureFollower(service: "verification", identity: identity, logger: host.logger) { erasure in try service.erase(erasure) }.start(on: host)
        try PhoneNoticeSender(identity: identity, sms: providers.sms, brand: settings.brand, logger: host.logger).start(on: host)
        // The gateway pins a request to the replica its id names only when ids name one.
        let requestIDs: JSON = settings.requestIDsNameReplica ? "name_replica" : "any_replica"
        host.addHealthCheck { ("request_ids", requestIDs) }
        try service.requeueInterruptedDeliveries(logger: host.logger)
        let logger = host.logger
        let dispatcher = DeliveryWorkers(workerCount: deliveryWorkers, name: "delivery", logger: logger) {
            service.sendNextQueuedDelivery(logger: logger)
        }
        service.deliveryWakeup.onQueued { [weak dispatcher] in dispatcher?.wake() }
        WorkflowTimer(
            service: service, host: host,
            intervalMilliseconds: Int64(try configuration.int(VerificationOptions.tickMilliseconds, range: 10...60_000))
        ).start()
        host.logger.info("verification ready", [
            "delivery.sms": .string(providers.sms.name), "delivery.voice": .string(providers.voice.name),
            "delivery.email": .string(providers.email.name),
        ])
        let status = host.run()
        // Queued messages are durable: whatever is not sent by the deadline goes out after the restart.
        let drainMilliseconds = Int64(try configuration.int(CommonOptions.drainTimeoutMilliseconds, range: 0...600_000))
        guard dispatcher.stop(deadlineMilliseconds: MonotonicClock.nowMilliseconds() + drainMilliseconds) else {
            host.exitWithoutCleanup(reason: "a message still being sent past the drain deadline", pool: dispatcher.threads)
        }
        return status
    }
}

/// Fires due workflow steps: a repeating timer on the event loop hands the scan to the worker
/// pool (never blocking the loop), at most one scan at a time; takes back messages a lost
/// replica was sending; prunes old rows hourly; wakes the delivery workers for retries that fell due.
final class WorkflowTimer: @unchecked Sendable {
    private let service: VerificationService
    private let host: ServiceHost
    private let intervalMilliseconds: Int64
    private let lock = Lock()
    private var running = false
    private var lastPruneMilliseconds: Int64 = 0
    private var lastAbandonCheckMilliseconds: Int64 = 0

    init(service: VerificationService, host: ServiceHost, intervalMilliseconds: Int64) {
        self.service = service
        self.host = host
        self.intervalMilliseconds = intervalMilliseconds
    }

    func start() {
        host.loop.scheduleRepeating(everyMilliseconds: intervalMilliseconds) { [self] in tick() }
    }

    private func tick() {
        // Retries whose back-off ended are due in the queue, however busy the hand-off keeps the workers.
        service.wantDeliveryQueueLook()
        lock.lock()
        guard !running else {
            lock.unlock()
            return
        }
        running = true
        lock.unlock()
        let submitted = host.workers.submit { [self] in
            service.runDueSteps(logger: host.logger) { work in host.workers.submit(work) }
            let now = MonotonicClock.nowMilliseconds()
            // A lease's quarter is soon enough for a claim a dead replica left: not a write every tick.
            if now - lastAbandonCheckMilliseconds >= service.settings.delivery.claimLeaseMilliseconds / 4 {
                lastAbandonCheckMilliseconds = now
                service.requeueAbandonedDeliveries(logger: host.logger)
            }
            if now - lastPruneMilliseconds > 3_600_000 {
                lastPruneMilliseconds = now
                service.prune(logger: host.logger)
            }
            lock.lock()
            running = false
            lock.unlock()
        }
        if !submitted {
            lock.lock()
            running = false
            lock.unlock()
        }
    }
}
