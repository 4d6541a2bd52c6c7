import Delivery
import LineProtocol
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
    public var maxEmailBytes = 254
    /// Identity's own limit on a password (`identity.check_password` reads at most this many bytes):
    /// a longer one is refused here as `weak_password` (`too_long`), as identity refuses one past its rule.
    public var maxPasswordBytes = 1024

    public init() {}
}

/// Password reset by e-mailed link: request, validate, complete. Handlers run on worker
/// threads; the lookup and the sending of `request` run later on `background`, so the answer
/// never depends on whether the address has an account.
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
    let background: WorkerPool
    let metrics: Metrics
    let logger: Logger
    let nowMilliseconds: @Sendable () -> Int64

    public init(
        settings: ResetSettings, store: ResetStore, subjects: ResetSubject, identity: IdentityDirectory, mail: DeliveryProvider,
        composer: ResetMailComposer, background: WorkerPool, metrics: Metrics, logger: Logger,
        backgroundIdentity: IdentityDirectory? = nil, nowMilliseconds: @escaping @Sendable () -> Int64 = { WallClock.nowMilliseconds() }
    ) {
        self.settings = settings
        self.store = store
        self.subjects = subjects
        self.identity = identity
        self.backgroundIdentity = backgroundIdentity ?? identity
        self.mail = mail
        self.composer = composer
        self.background = background
        self.metrics = metrics
        self.logger = logger
        self.nowMilliseconds = nowMilliseconds
    }

    public func register(on router: Router) {
        router.register("reset.request") { [self] params, context in
            try request(email: params.string("email", maxLength: 1024), context: context)
            return ["ok": true]
        }
        router.register("reset.validate") { [self] params, _ in
            let expiresAt = try validate(token: params.string("token", maxLength: 256))
            return ["valid": true, "expires_at": .int(expiresAt)]
        }
        router.register("reset.complete") { [self] params, context in
            try complete(token: params.string("token", maxLength: 256), password: params.string("password", maxLength: 4096), context: context)
            return ["ok": true]
        }
    }

    // MARK: request

    /// Checks only the shape of the address, then hands everything else to the background pool
    /// and returns: the same answer, in the same time, for every address.
    public func request(email: String, context: CallContext) throws(RPCError) {
        guard let address = Self.normalizedAddress(email, maxBytes: settings.maxEmailBytes) else {
            throw RPCError.invalidParams("email must be an e-mail address", field: "email")
        }
        metrics.increment("reset.requested")
        let background = CallContext(
            method: context.method, requestID: context.requestID, client: context.client,
            logger: context.logger, deadlineMilliseconds: MonotonicClock.nowMilliseconds() + 30_000)
        let submitted = self.background.submit { [self] in process(address: address, context: background) }
        if !submitted {
            metrics.increment("reset.dropped")
            context.logger.warning("reset request dropped: background queue full")
        }
    }

    /// The work behind `request`: rate limits, lookup, token, mail. Synchronous; tests call it directly.
    public func process(address: String, context: CallContext) {
        let now = nowMilliseconds()
        do {
            if let refused = try store.admit(rules(address: address, client: context.client), nowMilliseconds: now) {
                metrics.increment("reset.refused")
                context.logger.info("reset request refused by rate limit", ["reset.limit": .string(refused.name)])
                return
            }
            // The mail goes to the address identity has on file, never to the text typed in the
            // request: a look-alike address that normalizes to the same account gets nothing.
            guard let userID = try backgroundIdentity.findUser(email: address, context: context),
                let accountAddress = try backgroundIdentity.email(userID: userID, context: context)
            else {
                metrics.increment("reset.unknown_address")
                context.logger.info("reset request for an address without an account")
                if settings.notifyUnknownAddresses { send(composer.unknownAddress(to: address), kind: "unknown_address", context: context) }
                return
            }
            let token = OpaqueToken.make(prefix: "lkr_")
            let hash = OpaqueToken.hash(token)
            let expiresAt = now + settings.tokenTTLSeconds * 1000
            let superseded = try store.issue(tokenHash: hash, userID: userID, nowMilliseconds: now, expiresAtMilliseconds: expiresAt)
            metrics.increment("reset.issued")
            context.logger.info("reset token issued", [
                "user.id": .string(userID), "reset.token_ref": .string(Self.reference(hash)), "reset.superseded": .int(Int64(superseded)),
            ])
            send(composer.resetLink(to: accountAddress, token: token, validForSeconds: settings.tokenTTLSeconds), kind: "reset_link", context: context)
        } catch {
            metrics.increment("reset.request_failed")
            context.logger.error("reset request failed", ["error": .string(String(describing: error))])
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

    /// Policy check, atomic claim, new password, every session, device key and trusted device
    /// ended, audit, notice mail.
    public func complete(token: String, password: String, context: CallContext) throws(ResetError) {
        let record = try live(token: token)
        guard password.utf8.count <= settings.maxPasswordBytes else {
            throw .weakPassword(rule: "too_long", message: "password must have at most \(settings.maxPasswordBytes) bytes")
        }
        let tokenRef = Self.reference(OpaqueToken.hash(token))
        let log = context.logger.with(["user.id": .string(record.userID), "reset.token_ref": .string(tokenRef)])
        let credentials: [String: JSON] = ["user_id": .string(record.userID), "password": .string(password)]
        do throws(RPCError) {
            _ = try identity.call("identity.check_password", credentials, context: context)
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
        do throws(RPCError) {
            _ = try identity.call("identity.set_password", credentials, context: context)
            _ = try identity.call("identity.revoke_all", ["user_id": .string(record.userID)], context: context)
            // A key an attacker enrolled would otherwise keep logging in at aal 2 after the reset.
            _ = try identity.call("identity.revoke_devices", ["user_id": .string(record.userID)], context: context)
        } catch {
            // Nothing is half done for the user: the token works again and a retry redoes both steps.
            try? store.release(tokenID: record.tokenID)
            throw Self.passwordFailure(error, log: log)
        }
        _ = try? store.supersedeLive(userID: record.userID, nowMilliseconds: nowMilliseconds())
        metrics.increment("reset.completed")
        log.info("password reset completed")
        afterCompletion(userID: record.userID, context: context)
    }

    /// Audit event and notice mail: off the answer's path, best effort.
    private func afterCompletion(userID: String, context: CallContext) {
        let background = CallContext(
            method: context.method, requestID: context.requestID, client: context.client,
            logger: context.logger.with(["user.id": .string(userID)]), deadlineMilliseconds: MonotonicClock.nowMilliseconds() + 30_000)
        let submitted = self.background.submit { [self] in
            do throws(RPCError) {
                _ = try backgroundIdentity.call("identity.record", ["user_id": .string(userID), "event": "password.reset", "outcome": "success"], context: background)
            } catch {
                background.logger.warning("audit record failed", ["error.reason": .string(error.reason ?? "error")])
            }
            do throws(RPCError) {
                if let address = try backgroundIdentity.email(userID: userID, context: background) {
                    send(composer.passwordChanged(to: address), kind: "password_changed", context: background)
                }
            } catch {
                background.logger.warning("password changed notice not sent", ["error.reason": .string(error.reason ?? "error")])
            }
        }
        if !submitted { metrics.increment("reset.dropped") }
    }

    private static func passwordFailure(_ error: RPCError, log: Logger) -> ResetError {
        if error.reason == Reason.weakPassword.rawValue {
            return .weakPassword(rule: error.data?["rule"]?.stringValue ?? "policy", message: error.message)
        }
        if error.reason == Reason.notFound.rawValue {
            log.warning("reset token names a user identity no longer has")
            return .invalidToken
        }
        log.error("identity call failed during reset", ["error.reason": .string(error.reason ?? "error")])
        return .unavailable
    }

    // MARK: delivery and helpers

    private func send(_ message: OutgoingMessage, kind: StaticString, context: CallContext) {
        do {
            try mail.deliver(message)
            metrics.increment("reset.mail_sent")
            context.logger.info("reset mail sent", ["mail.kind": .string(kind.description), "delivery.provider": .string(mail.name)])
        } catch {
            metrics.increment("reset.mail_failed")
            context.logger.error("reset mail failed", [
                "mail.kind": .string(kind.description), "delivery.provider": .string(error.provider),
                "delivery.permanent": .bool(error.permanent), "error": .string(error.detail),
            ])
        }
    }

    /// Trimmed, lower-cased, one `@` with text either side, no spaces or controls; nil otherwise.
    static func normalizedAddress(_ raw: String, maxBytes: Int) -> String? {
        let address = raw.trimmingSpaces().lowercased()
        guard address.utf8.count <= maxBytes, address.utf8.count >= 3 else { return nil }
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix(".") else { return nil }
        guard !address.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7f || "<>()[]\\,;:\"".unicodeScalars.contains($0) }) else { return nil }
        return address
    }

    /// The first 4 bytes of SHA-256(token hash), in hex: enough to follow one token through
    /// the logs, useless for finding it.
    static func reference(_ tokenHash: [UInt8]) -> String {
        Hex.encode(Array(SHA256.hash(tokenHash).prefix(4)))
    }

    /// Our errors and Storage errors never carry bound values or secrets; still, only the type
    /// and its own description reach the log.
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var scalars = Substring(self).unicodeScalars
        while let first = scalars.first, first == " " || first == "\t" || first == "\n" || first == "\r" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" || last == "\n" || last == "\r" { scalars.removeLast() }
        return String(scalars)
    }
}
