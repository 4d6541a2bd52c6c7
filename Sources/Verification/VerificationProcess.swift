import Delivery
import Foundation
import ServiceKit

/// Builds the verification service from configuration and serves until SIGTERM.
public enum VerificationProcess {
    public static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
        let host = try ServiceHost(
            name: "verification", defaultPort: 7402, arguments: arguments, environment: environment,
            extraOptions: VerificationOptions.all + DeliveryOptions.all + ProviderFactory.options + SMTPOptions.all)
        let configuration = host.configuration
        let settings = try VerificationSettings(replicaID: host.replicaID, configuration: configuration)
        // Replicas may share a volume (`docker compose --scale`): each keeps its own file,
        // since the requests it starts are its own (their ids name it).
        let fileName = host.replicaID == "verification" ? "verification.sqlite" : "verification-\(host.replicaID).sqlite"
        let store = try SQLiteVerificationStore(path: try host.dataFile(fileName))
        let key = try ServerKey.load(configuration: configuration, keyFile: try host.dataFile("verification.key"))
        let providers = try ProviderFactory.make(
            configuration: configuration, logger: host.logger,
            emailProvider: try DeliveryOptions.emailProvider(configuration, logger: host.logger))
        let service = VerificationService(settings: settings, store: store, providers: providers, key: key, metrics: host.metrics)
        let identity = RPCIdentityDirectory(client: try host.client(for: "identity", option: CommonOptions.identity))
        VerificationMethods(service: service, identity: identity).register(on: host.router)
        host.addHealthCheck {
            let ok = (try? store.read { tx in try tx.request(id: "") }) != nil
            return ("database", ok ? "ok" : "failing")
        }
        try service.requeueInterruptedDeliveries(logger: host.logger)
        let logger = host.logger
        let dispatcher = DeliveryWorkers(
            workerCount: try configuration.int(VerificationOptions.deliveryWorkers, range: 1...64), name: "delivery", logger: logger
        ) { service.sendNextQueuedDelivery(logger: logger) }
        service.deliveryWakeup.onQueued { [weak dispatcher] in dispatcher?.wake() }
        WorkflowTimer(
            service: service, host: host, dispatcher: dispatcher,
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
/// pool (never blocking the loop), at most one scan at a time; prunes old rows hourly; wakes the
/// delivery workers for retries that fell due.
final class WorkflowTimer: @unchecked Sendable {
    private let service: VerificationService
    private let host: ServiceHost
    private let dispatcher: DeliveryWorkers
    private let intervalMilliseconds: Int64
    private let lock = NSLock()
    private var running = false
    private var lastPruneMilliseconds: Int64 = 0

    init(service: VerificationService, host: ServiceHost, dispatcher: DeliveryWorkers, intervalMilliseconds: Int64) {
        self.service = service
        self.host = host
        self.dispatcher = dispatcher
        self.intervalMilliseconds = intervalMilliseconds
    }

    func start() {
        host.loop.scheduleRepeating(everyMilliseconds: intervalMilliseconds) { [self] in tick() }
    }

    private func tick() {
        dispatcher.wake()
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
