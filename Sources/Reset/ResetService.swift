import Contract
import Delivery
import LineProtocol
import Platform
import RPC
import Runtime
import Secrets
import ServiceKit

public struct ResetConfigurationError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The reset service's domain errors, mapped to wire reasons in one place.
public enum ResetError: Error, Sendable, Equatable, RPCErrorConvertible {
    /// Unknown, expired, superseded and used tokens: one answer for all.
    case invalidToken
    /// Identity's password policy refused the new password; the token stays usable.
    case weakPassword(rule: String, message: String)
    /// Identity could not be reached or failed; the token stays usable.
    case unavailable

    public var rpcError: RPCError {
        switch self {
        case .invalidToken:
            return RPCError(.invalidToken, "this reset link is not valid (unknown, expired or already used); ask for a new one")
        case .weakPassword(let rule, let message):
            return RPCError(.weakPassword, message, extra: ["rule": .string(rule)])
        case .unavailable:
            return RPCError(.unavailable, "password reset is unavailable right now; try again shortly")
        }
    }
}

/// Tunables of the flow, each with its unit in the name.
public struct ResetSettings: Sendable {
    public var tokenTTLSeconds: Int64 = 30 * 60
    /// Per e-mail address: at most one request in this many seconds...
    public var addressIntervalSeconds: Int64 = 60
    /// ...and at most this many an hour.
    public var addressPerHour = 5
    /// Per client address (`context.client`): requests an hour, whatever the e-mail.
    public var clientPerHour = 20
    /// Tell an address without an account that someone asked (off: stays silent).
    public var notifyUnknownAddresses = false
    /// Identity's own limit on a password (`identity.check_password` reads at most this many bytes):
    /// a longer one is refused here as `weak_password` (`too_long`), as identity refuses one past its rule.
    public var maxPasswordBytes = 1024
    /// Jobs waiting in the queue before new requests are dropped (still answered `ok`).
    public var maxQueuedJobs = 1000
    /// Tries per job on transient failures (identity down, mail server busy), the first included.
    public var jobAttempts = 5
    /// Wait before a job's second try; doubles each time, at most a minute.
    public var jobBackoffMilliseconds: Int64 = 1000
    /// A claimed job is taken again by any worker of any replica once this has passed without
    /// it being done (its replica died). Well above the longest job: identity calls end after
    /// 30 s, and a mail is one SMTP exchange.
    public var jobLeaseMilliseconds: Int64 = 300_000

    public init() {}
}

/// Password reset by e-mailed link: request, validate, complete. Handlers run on worker
/// threads; the lookup and the sending of `request` are queued durably and run later by the
/// mail workers (`ResetJobRunner.swift`), so the answer never depends on whether the address
/// has an account, and a stop does not lose what an answer promised.
public final class ResetService: Sendable {
    public let settings: ResetSettings
    let store: ResetStore
    let subjects: ResetSubject
    let identity: IdentityDirectory
    /// Identity for work after the answer (its own connection and loop in the process, so it
    /// keeps working while the server drains on SIGTERM).
    let backgroundIdentity: IdentityDirectory
    let mail: DeliveryProvider
    let composer: ResetMailComposer
    /// Fired after a job is queued.
    public let jobQueued = DeliveryWakeup()
    let metrics: Metrics
    let logger: Logger
    let nowMilliseconds: @Sendable () -> Int64

    public init(
        settings: ResetSettings, store: ResetStore, subjects: ResetSubject, identity: IdentityDirectory, mail: DeliveryProvider,
        composer: ResetMailComposer, metrics: Metrics, logger: Logger,
        backgroundIdentity: IdentityDirectory? = nil, nowMilliseconds: @escaping @Sendable () -> Int64 = { WallClock.nowMilliseconds() }
    ) {
        self.settings = settings
        self.store = store
        self.subjects = subjects
        self.identity = identity
        self.backgroundIdentity = backgroundIdentity ?? identity
        self.mail = mail
        self.composer = composer
        self.metrics = metrics
        self.logger = logger
        self.nowMilliseconds = nowMilliseconds
    }

    public func register(on router: Router) {
        router.register(ResetContract.request) { [self] params, context in
            try request(email: params.string("email", maxLength: 1024), context: context)
            return ["ok": true]
        }
        router.register(DataExportContract.resetPart) { [store] params, _ in
            ["links": .array(try store.linksForExport(userID: try params.string("user_id", maxLength: 128)))]
        }
        router.register(ResetContract.validate) { [self] params, _ in
            let expiresAt = try validate(token: params.string("token", maxLength: 256))
            return ["valid": true, "expires_at": .int(expiresAt)]
        }
        router.register(ResetContract.complete) { [self] params, context in
            try await complete(token: params.string("token", maxLength: 256), password: params.string("password", maxLength: 4096), context: context)
            return ["ok": true]
        }
    }

    // MARK: request

    /// Checks the shape of the address, admits the request by the rate limits and queues its
    /// job in one transaction, and returns: the same answer, in the same time, for every address.
    public func request(email: String, context: CallContext) throws(RPCError) {
        guard case .success(let address) = EmailAddress.normalized(email) else {
            throw RPCError.invalidParams("email must be an e-mail address", field: "email")
        }
        metrics.increment("reset.requested")
        let job = ResetJob(kind: .resetLink, address: address, client: context.client, requestID: context.requestID)
        switch try queue(job, rules: rules(address: address, client: context.client), context: context) {
        case .queued:
            return
        case .refused(let rule):
            metrics.increment("reset.refused")
            context.logger.info("reset request refused by rate limit", ["reset.limit": .string(rule.name)])
        case .full:
            metrics.increment("reset.dropped")
            context.logger.warning("reset request dropped: the job queue is full")
        }
    }

    func rules(address: String, client: String?) -> [RateRule] {
        let subject = subjects.address(address)
        var rules = [
            RateRule(name: "address_interval", subject: subject, limit: 1, windowMilliseconds: settings.addressIntervalSeconds * 1000),
            RateRule(name: "address_hourly", subject: subject, limit: settings.addressPerHour, windowMilliseconds: 3_600_000),
        ]
        if let client { rules.append(RateRule(name: "client_hourly", subject: "c:" + client, limit: settings.clientPerHour, windowMilliseconds: 3_600_000)) }
        return rules
    }

    // MARK: validate

    /// The token's expiry (unix seconds) when it can still be used.
    public func validate(token: String) throws(ResetError) -> Int64 {
        try live(token: token).expiresAtMilliseconds / 1000
    }

    private func live(token: String) throws(ResetError) -> ResetTokenRecord {
        guard OpaqueToken.isWellFormed(token, prefix: "lkr_") else { throw .invalidToken }
        let hash = OpaqueToken.hash(token)
        let record: ResetTokenRecord?
        do {
            record = try store.liveToken(hash: hash, nowMilliseconds: nowMilliseconds())
        } catch {
            logger.error("reset token lookup failed", ["error": .string(String(describing: error))])
            throw .unavailable
        }
        guard let record else { throw .invalidToken }
        return record
    }

    // MARK: complete

    /// Policy check, atomic claim, new password, every session, device key and device token
    /// ended with the second factors set up just before, audit, notice mail.
    public func complete(token: String, password: String, context: CallContext) async throws(ResetError) {
        let record = try live(token: token)
        guard password.utf8.count <= settings.maxPasswordBytes else {
            throw .weakPassword(rule: "too_long", message: "password must have at most \(settings.maxPasswordBytes) bytes")
        }
        let tokenRef = Self.reference(OpaqueToken.hash(token))
        let log = context.logger.with(["user.id": .string(record.userID), "reset.token_ref": .string(tokenRef)])
        let credentials: [String: JSON] = ["user_id": .string(record.userID), "password": .string(password)]
        do throws(RPCError) {
            _ = try await identity.call(IdentityInternalContract.checkPassword, credentials, context: context)
        } catch {
            throw Self.passwordFailure(error, log: log)
        }
        let claimed: Bool
        do {
            claimed = try store.claim(tokenID: record.tokenID, nowMilliseconds: nowMilliseconds())
        } catch {
            log.error("reset token claim failed", ["error": .string(String(describing: error))])
            throw .unavailable
        }
        guard claimed else {
            log.info("reset token lost the race or ended meanwhile")
            throw .invalidToken
        }
        var removedFactors: [String] = []
        do throws(RPCError) {
            _ = try await identity.call(IdentityInternalContract.setPassword, credentials, context: context)
            _ = try await identity.call(IdentityInternalContract.revokeAll, ["user_id": .string(record.userID)], context: context)
            // Keys, device tokens and recently set-up factors an intruder may have planted.
            let cleanup = try await identity.call(IdentityInternalContract.revokeDevices, ["user_id": .string(record.userID)], context: context)
            removedFactors = cleanup["removed_factors"]?.arrayValue?.compactMap(\.stringValue) ?? []
        } catch {
            // Nothing is half done for the user: the token works again and a retry redoes both steps.
            try? store.release(tokenID: record.tokenID)
            throw Self.passwordFailure(error, log: log)
        }
        _ = try? store.supersedeLive(userID: record.userID, nowMilliseconds: nowMilliseconds())
        metrics.increment("reset.completed")
        log.info("password reset completed")
        afterCompletion(userID: record.userID, removedFactors: removedFactors, context: context)
    }

    /// Audit event and notice mail: queued, done after the answer.
    private func afterCompletion(userID: String, removedFactors: [String], context: CallContext) {
        var job = ResetJob(kind: .passwordChanged, userID: userID, client: context.client, requestID: context.requestID)
        job.removedFactors = removedFactors
        do throws(RPCError) {
            if try queue(job, rules: [], context: context) == .full { metrics.increment("reset.dropped") }
        } catch {
            // The password is changed and the sessions ended; only the notice is lost, and the log says so.
            metrics.increment("reset.dropped")
        }
    }

    private static func passwordFailure(_ error: RPCError, log: Logger) -> ResetError {
        if error.reason == .weakPassword {
            return .weakPassword(rule: error.data?["rule"]?.stringValue ?? "policy", message: error.message)
        }
        if error.reason == .notFound {
            log.warning("reset token names a user identity no longer has")
            return .invalidToken
        }
        log.error("identity call failed during reset", ["error.reason": .string(error.reasonText ?? "error")])
        return .unavailable
    }

    // MARK: delivery and helpers

    /// The first 4 bytes of SHA-256(token hash), in hex: enough to follow one token through
    /// the logs, useless for finding it.
    static func reference(_ tokenHash: [UInt8]) -> String {
        Hex.encode(Array(SHA256.hash(tokenHash).prefix(4)))
    }
}
