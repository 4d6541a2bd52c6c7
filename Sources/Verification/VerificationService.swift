import Contract
import Delivery
import FoundationEssentials
import LineProtocol
import Platform
import Runtime
import Secrets
import ServiceKit

/// Wall time in Unix milliseconds; tests inject a clock they move by hand.
public protocol VerificationClock: Sendable {
    func nowMilliseconds() -> Int64
}

public struct SystemClock: VerificationClock {
    public init() {}
    public func nowMilliseconds() -> Int64 { WallClock.nowMilliseconds() }
}

/// A start, as the methods layer hands it over: already typed, not yet checked against policy.
public struct StartParameters: Sendable {
    public var number: String?
    public var email: String?
    public var userID: String?
    public var workflow: Workflow
    public var purpose: Purpose
    public var brand: String?
    public var codeLength: Int?
    public var codeExpirySeconds: Int64?
    public var nextEventWaitSeconds: Int64?
    public var locale: MessageLocale?
    public var payload: [String: JSON]?
    public var allowEmail = false
    public var country: String?
    public var client: String?
    /// The number `userID` has proved (E.164), if any: only it gets `login` and `transaction`
    /// codes for that user; any other number of the user's gets nothing but a `phone_proof` code.
    public var provenNumber: String?

    public init(workflow: Workflow, purpose: Purpose) {
        self.workflow = workflow
        self.purpose = purpose
    }
}

/// Who may touch a request through the public methods: only the session's own user, and a
/// public check only for a `login` request.
public struct RequestOwner: Sendable {
    public var userID: String
    public var loginOnly: Bool

    public init(userID: String, loginOnly: Bool) {
        self.userID = userID
        self.loginOnly = loginOnly
    }
}

public struct CheckResult: Sendable, Equatable {
    public var userID: String?
    public var purpose: Purpose
    /// Where the code went (a `phone_proof` check proves this number).
    public var number: String?
    /// The channel that carried the code (the factor to name in `identity.elevate`).
    public var channel: DeliveryChannel
}

/// The logic of one-time codes: start, check, cancel, next, status, and the timed steps of
/// workflows. No sockets, no JSON text: typed input, typed results, `VerificationError`.
/// Every method blocks (SQLite): call from worker threads only. Messages go out through the
/// delivery queue (`QueuedDeliverySender.swift`), never inside a request.
public final class VerificationService: Sendable {
    public let settings: VerificationSettings
    public let store: VerificationStore
    public let providers: ChannelProviders
    public let clock: VerificationClock
    /// Counters in `verification.metrics`: `delivery.<channel>.sent|failed`, `verification.<outcome>`.
    public let metrics: Metrics?
    /// Fired after a transaction that queued a message commits.
    public let deliveryWakeup = DeliveryWakeup()
    /// First messages on their way to a delivery worker without a claim of the worker's own.
    let handOff: DeliveryHandOff
    /// The server key, set up once: every code, payload and message is hashed under it.
    let key: HMACKey

    public init(
        settings: VerificationSettings, store: VerificationStore, providers: ChannelProviders, key: [UInt8],
        clock: VerificationClock = SystemClock(), metrics: Metrics? = nil
    ) {
        precondition(key.count >= 32, "the verification key must be at least 32 bytes")
        self.settings = settings
        self.store = store
        self.providers = providers
        self.key = HMACKey(key)
        self.clock = clock
        self.metrics = metrics
        handOff = DeliveryHandOff(capacity: settings.delivery.handOffCapacity)
    }

    // MARK: Start

    /// Validates, applies the concurrency rule and the send limits, stores the request with the
    /// hash of a fresh code and queues its first message in the same transaction. Returns the
    /// request id once the message is queued; the send's outcome shows in the request's events.
    public func start(_ parameters: StartParameters, logger: Logger) throws -> String {
        let plan = try validate(parameters)
        let now = clock.nowMilliseconds()
        let id = Self.newRequestID(namingReplica: settings.requestIDsNameReplica ? settings.replicaID : nil)
        let channel = parameters.workflow.steps[0]
        // A free delivery worker place: the message is claimed for this replica right here, and
        // the worker that sends it needs no claiming transaction.
        let handsOff = handOff.reserve()
        var handedOff = false
        defer { if handsOff && !handedOff { handOff.release() } }  // refused or failed: the place goes back
        let queued = QueuedDelivery.make(requestID: id, step: 0, channel: channel, trigger: "start", nowMilliseconds: now)
        let delivery = handsOff ? queued.claimedForFirstTry : queued
        let code = deliveryCode(delivery, length: plan.codeLength)
        let request = StoredRequest(
            id: id, number: plan.number?.e164, email: plan.email, userID: parameters.userID, purpose: parameters.purpose,
            workflow: parameters.workflow, step: 0, brand: plan.brand, locale: plan.locale, codeLength: plan.codeLength,
            codeExpirySeconds: plan.codeExpirySeconds, nextEventWaitSeconds: plan.nextEventWaitSeconds,
            codeHash: codeHash(requestID: id, code: code), codeChannel: channel,
            payloadHash: parameters.payload.map { payloadHash(.object($0)) }, payloadJSON: parameters.payload.map { JSON.object($0).text },
            status: .pending, failures: 0, createdAt: now, codeExpiresAt: now + plan.codeExpirySeconds * 1000,
            nextEventAt: parameters.workflow.steps.count > 1 ? now + plan.nextEventWaitSeconds * 1000 : nil,
            finishedAt: nil, client: parameters.client)
        let keys = limitKeys(
            destination: plan.destination(for: channel), purpose: parameters.purpose, userID: parameters.userID, client: parameters.client)
        let claimant = handsOff ? settings.replicaID : nil
        let refusal: VerificationError? = try store.write { tx in
            if let live = try tx.liveRequest(destination: request.liveKey, nowMilliseconds: now) {
                return .concurrentVerification(requestID: live.id)
            }
            let windows = try SendWindows(tx, keys: keys)
            if let limited = try windows.firstExceededLimit(tx, nowMilliseconds: now) { return limited }
            try tx.insert(request)
            try tx.addEvent(requestID: id, RequestEvent(at: now, kind: "started", detail: parameters.workflow.rawValue))
            try windows.record(tx, at: now)
            try tx.enqueue(delivery, claimedBy: claimant)
            return nil
        }
        if let refusal {
            metrics?.increment("verification.start.\(refusal.rpcError.reasonText ?? "refused")")
            logger.info("verification refused", ["verification.reason": .string(refusal.rpcError.reasonText ?? "")])
            throw refusal
        }
        logger.info("verification started", [
            "verification.request_id": .string(id), "verification.workflow": .string(parameters.workflow.rawValue),
            "verification.purpose": .string(parameters.purpose.rawValue),
        ])
        guard handsOff else {
            // Every delivery worker's place was taken: a steady count says the workers are too few.
            if settings.delivery.handOffCapacity > 0 { metrics?.increment("delivery.hand_off_full") }
            wantDeliveryQueueLook()
            return id
        }
        handOff.push(DeliveryHandOff.Item(delivery: delivery, request: request))
        handedOff = true
        metrics?.increment("delivery.handed_off")
        deliveryWakeup.fire()
        return id
    }

    /// `vr_<replica>_<stamp><random>` when the request lives in one replica's own file (the
    /// gateway and accounts route to that replica); `vr_<stamp><hex>` when every replica shares
    /// the database: no `_` after the prefix, so nobody pins it and any replica serves it. The
    /// stamp sorts ids by creation (`SortableIDs`); 128 random bits keep them unguessable.
    static func newRequestID(namingReplica replicaID: String?) -> String {
        let ids = SortableIDs.shared
        guard let replicaID else { return "vr_" + ids.stamp() + Hex.encode(SecureRandom.bytes(16)) }
        return ids.next(prefix: "vr_\(replicaID)_", randomBytes: 16)
    }

    struct Plan {
        var number: PhoneNumber?
        var email: String?
        var brand: String
        var locale: MessageLocale
        var codeLength: Int
        var codeExpirySeconds: Int64
        var nextEventWaitSeconds: Int64

        func destination(for channel: DeliveryChannel) -> String {
            channel == .email ? "email:\(email ?? "")" : "number:\(number?.e164 ?? "")"
        }
    }

    private func validate(_ p: StartParameters) throws(VerificationError) -> Plan {
        let steps = p.workflow.steps
        if p.workflow.usesEmail {
            guard !p.purpose.isPhoneFactor else {
                throw .invalidParams("e-mail is not a second factor for login", field: "channel", rule: "email_not_a_login_factor")
            }
            guard p.allowEmail else { throw .invalidParams("the e-mail channel needs allow_email", field: "channel", rule: "email_not_allowed") }
            guard let email = p.email, case .success = EmailAddress.normalized(email) else {
                throw .invalidParams("email is required: an address", field: "email")
            }
        }
        var number: PhoneNumber?
        if steps.contains(where: { $0 != .email }) {
            guard let raw = p.number else { throw .invalidParams("number is required: an E.164 phone number", field: "number") }
            guard let parsed = PhoneNumber(raw) else { throw .invalidParams("number must be an E.164 phone number (+ and 8-15 digits)", field: "number") }
            if let country = p.country, country.uppercased() != parsed.country {
                throw .invalidParams("number does not belong to country", field: "country")
            }
            if let allowed = settings.allowedCountries, !allowed.contains(parsed.country ?? "") {
                throw .invalidParams("codes are not sent to this country", field: "number", rule: "country_not_allowed")
            }
            number = parsed
        }
        try checkOwnership(p, number: number)
        let minimumLength = p.purpose.isPhoneFactor ? settings.minimumLoginCodeLength : 4
        let codeLength = p.codeLength ?? settings.defaultCodeLength
        guard (minimumLength...10).contains(codeLength) else {
            throw .invalidParams("code_length must be between \(minimumLength) and 10", field: "code_length")
        }
        let expiry = p.codeExpirySeconds ?? settings.defaultCodeExpirySeconds
        let lifetimes = VerificationContract.codeLifetimeSeconds
        guard lifetimes.contains(expiry) else {
            throw .invalidParams("code_expiry_s must be between \(lifetimes.lowerBound) and \(lifetimes.upperBound)", field: "code_expiry_s")
        }
        let wait = p.nextEventWaitSeconds ?? min(settings.publicNextWaitSeconds, expiry)
        if steps.count > 1 {
            guard (settings.minimumNextWaitSeconds...min(settings.maximumNextWaitSeconds, expiry)).contains(wait) else {
                throw .invalidParams(
                    "next_event_wait_s must be between \(settings.minimumNextWaitSeconds) and code_expiry_s (\(expiry))",
                    field: "next_event_wait_s")
            }
        }
        let brand = p.brand ?? settings.brand
        guard !brand.isEmpty, brand.utf8.count <= 32, !brand.contains(where: \.isNewline) else {
            throw .invalidParams("brand must be 1-32 bytes on one line", field: "brand")
        }
        return Plan(
            number: number, email: p.email, brand: brand, locale: p.locale ?? settings.defaultLocale, codeLength: codeLength,
            codeExpirySeconds: expiry, nextEventWaitSeconds: wait)
    }

    /// A number becomes a factor only once its user has proved it: an unproven one gets nothing
    /// but the proof code. A start without a user (an internal caller naming a bare number) is the
    /// caller's own business.
    private func checkOwnership(_ p: StartParameters, number: PhoneNumber?) throws(VerificationError) {
        guard p.purpose != .phoneProof else {
            guard p.userID != nil, number != nil, !p.workflow.usesEmail else {
                throw .invalidParams("a phone proof needs user_id and a phone channel", field: "purpose")
            }
            return
        }
        guard p.userID != nil, let number, number.e164 != p.provenNumber.flatMap(PhoneNumber.init)?.e164 else { return }
        throw .invalidParams("the user has not proved this phone number yet", field: "user_id", rule: "phone_not_proven")
    }

    // MARK: Limits

    /// Proof codes count against the number's own proof budget, apart from the owner's; both
    /// answer scope `number`, so a refusal says nothing about who else uses the number.
    private func limitKeys(destination: String, purpose: Purpose, userID: String?, client: String?) -> [(String, [SendLimit], String)] {
        let keyed = limitKey(destination: destination)
        var keys: [(String, [SendLimit], String)] = purpose == .phoneProof
            ? [("proof:" + keyed, settings.perProofNumber, "number")]
            : [(keyed, settings.perNumber, "number")]
        if let userID { keys.append(("user:\(userID)", settings.perUser, "user")) }
        if let client { keys.append(("client:\(client)", settings.perClient, "client")) }
        keys.append(("global", settings.global, "global"))
        return keys
    }

    // MARK: Check

    private enum CheckOutcome {
        case verified(CheckResult)
        case refused(VerificationError)
    }

    /// Constant-time comparison of the code's keyed hash, and of the payload's: both must match.
    /// A wrong one counts; the `maxAttempts`-th fails the request.
    public func check(requestID: String, code: String, payload: JSON?, owner: RequestOwner?, logger: Logger) throws -> CheckResult {
        guard (1...16).contains(code.utf8.count), code.utf8.allSatisfy({ (48...57).contains($0) }) else {
            throw VerificationError.invalidParams("code must be a string of digits", field: "code")
        }
        let presentedCode = codeHash(requestID: requestID, code: code)
        let presentedPayload = payload.map(payloadHash) ?? []
        let now = clock.nowMilliseconds()
        let outcome: CheckOutcome = try store.write { [self] tx in
            guard var request = try tx.request(id: requestID), Self.owns(owner, request) else { return .refused(.notFound) }
            if let refusal = try Self.finishedRefusal(tx, &request, nowMilliseconds: now) { return .refused(refusal) }
            guard request.codeExpiresAt > now else { return .refused(.expired) }
            let codeMatches = constantTimeEquals(presentedCode, request.codeHash)
            let payloadMatches = constantTimeEquals(presentedPayload, request.payloadHash ?? [])
            guard codeMatches && payloadMatches else {
                request.failures += 1
                let failed = request.failures >= settings.maxAttempts
                try tx.addEvent(requestID: requestID, RequestEvent(at: now, kind: "check_failed", detail: payloadMatches ? nil : "payload"))
                if failed {
                    request.status = .failed
                    request.nextEventAt = nil
                    request.finishedAt = now
                    try tx.addEvent(requestID: requestID, RequestEvent(at: now, kind: "failed", detail: "too_many_attempts"))
                }
                try tx.update(request)
                return .refused(failed ? .tooManyAttempts : .invalidCode(attemptsLeft: settings.maxAttempts - request.failures))
            }
            request.status = .verified
            request.nextEventAt = nil
            request.finishedAt = now
            try tx.update(request)
            try tx.addEvent(requestID: requestID, RequestEvent(at: now, kind: "verified", channel: request.codeChannel?.rawValue))
            return .verified(CheckResult(
                userID: request.userID, purpose: request.purpose, number: request.number, channel: request.codeChannel ?? .sms))
        }
        switch outcome {
        case .verified(let result):
            metrics?.increment("verification.verified")
            logger.info("verification verified", ["verification.request_id": .string(requestID)])
            return result
        case .refused(let error):
            metrics?.increment("verification.\(error.rpcError.reasonText ?? "refused")")
            logger.info("verification check refused", [
                "verification.request_id": .string(requestID), "verification.reason": .string(error.rpcError.reasonText ?? ""),
            ])
            throw error
        }
    }

    private static func owns(_ owner: RequestOwner?, _ request: StoredRequest) -> Bool {
        guard let owner else { return true }
        return request.userID == owner.userID && (!owner.loginOnly || request.purpose.isPhoneFactor)
    }

    /// The answer for a request that can no longer be checked (marking a lapsed one expired), or nil.
    private static func finishedRefusal(_ tx: VerificationTransaction, _ request: inout StoredRequest, nowMilliseconds now: Int64) throws -> VerificationError? {
        if request.status == .pending && !request.isLive(nowMilliseconds: now) {
            request.status = .expired
            request.finishedAt = now
            try tx.update(request)
            try tx.addEvent(requestID: request.id, RequestEvent(at: now, kind: "expired"))
        }
        switch request.status {
        case .pending: return nil
        case .verified: return .conflict("this verification is already verified", status: "verified")
        case .cancelled: return .conflict("this verification was cancelled", status: "cancelled")
        case .failed: return .tooManyAttempts
        case .expired: return .expired
        }
    }

    // MARK: Cancel and next

    /// Ends a pending request; its code stops working at once.
    public func cancel(requestID: String, owner: RequestOwner?, logger: Logger) throws -> StoredRequest.Status {
        let now = clock.nowMilliseconds()
        let refusal: VerificationError? = try store.write { tx in
            guard var request = try tx.request(id: requestID), Self.owns(owner, request) else { return .notFound }
            if try Self.finishedRefusal(tx, &request, nowMilliseconds: now) != nil {
                return .conflict("only a pending verification can be cancelled", status: request.status.rawValue)
            }
            request.status = .cancelled
            request.nextEventAt = nil
            request.finishedAt = now
            try tx.update(request)
            try tx.addEvent(requestID: requestID, RequestEvent(at: now, kind: "cancelled"))
            return nil
        }
        if let refusal { throw refusal }
        logger.info("verification cancelled", ["verification.request_id": .string(requestID)])
        return .cancelled
    }

    /// Fires the next step of the workflow now (the user asked for a call instead of waiting).
    /// Counts against the send limits like a start.
    public func next(requestID: String, owner: RequestOwner?, client: String?, logger: Logger) throws -> DeliveryChannel {
        try advance(requestID: requestID, owner: owner, client: client, trigger: .caller, logger: logger)
    }

    enum Trigger { case caller, timer }

    private enum Claim {
        case claimed(DeliveryChannel)
        case refused(VerificationError)
        case nothingToDo
    }

    /// Claims the next step and queues its message in one transaction (so the timer and a caller
    /// never both fire it). The fresh code replaces the current one once it is sent; if its
    /// delivery fails the previous code stays valid.
    @discardableResult
    func advance(requestID: String, owner: RequestOwner?, client: String?, trigger: Trigger, logger: Logger) throws -> DeliveryChannel {
        let now = clock.nowMilliseconds()
        let claim: Claim = try store.write { [self] tx in
            guard var request = try tx.request(id: requestID), Self.owns(owner, request) else { return .refused(.notFound) }
            if try Self.finishedRefusal(tx, &request, nowMilliseconds: now) != nil {
                return trigger == .timer ? .nothingToDo : .refused(.conflict("this verification is finished", status: request.status.rawValue))
            }
            guard request.hasNextStep else {
                return trigger == .timer ? .nothingToDo : .refused(.conflict("this workflow has no further channel", status: "pending"))
            }
            if trigger == .timer, let due = request.nextEventAt, due > now { return .nothingToDo }
            let channel = request.workflow.steps[request.step + 1]
            let destination = channel == .email ? "email:\(request.email ?? "")" : "number:\(request.number ?? "")"
            let keys = trigger == .timer
                ? [("global", settings.global, "global")]
                : limitKeys(destination: destination, purpose: request.purpose, userID: request.userID, client: client)
            let windows = try SendWindows(tx, keys: keys)
            let limited = try windows.firstExceededLimit(tx, nowMilliseconds: now)
            if let limited, trigger == .caller { return .refused(limited) }
            request.step += 1
            request.nextEventAt = request.hasNextStep ? now + request.nextEventWaitSeconds * 1000 : nil
            try tx.update(request)
            if limited != nil {
                // The budget is spent: this step is skipped (the current code stays valid).
                try tx.addEvent(requestID: requestID, RequestEvent(at: now, kind: "skipped", channel: channel.rawValue, detail: "rate_limited"))
                return .nothingToDo
            }
            try windows.record(tx, at: now)
            let firedBy = trigger == .timer ? "timer" : "next"
            try tx.enqueue(
                QueuedDelivery.make(requestID: requestID, step: request.step, channel: channel, trigger: firedBy, nowMilliseconds: now),
                claimedBy: nil)
            return .claimed(channel)
        }
        switch claim {
        case .nothingToDo: return .sms
        case .refused(let error): throw error
        case .claimed(let channel):
            wantDeliveryQueueLook()
            return channel
        }
    }

    /// Fires every step that is due (queues its message), and marks lapsed requests expired. The
    /// timer calls it on a worker and passes `run` = "submit to the worker pool" (the claim
    /// transaction keeps a step from firing twice).
    /// Returns how many due steps were handed to `run`.
    @discardableResult
    public func runDueSteps(
        logger: Logger, limit: Int = 100, run: (@escaping @Sendable () -> Void) -> Bool = { work in work(); return true }
    ) -> Int {
        let now = clock.nowMilliseconds()
        do {
            let due = try store.read { tx in try tx.dueRequestIDs(nowMilliseconds: now, limit: limit) }
            var handed = 0
            for id in due {
                let stepLogger = logger.with(["verification.request_id": .string(id)])
                let accepted = run { [self] in
                    do {
                        try advance(requestID: id, owner: nil, client: nil, trigger: .timer, logger: stepLogger)
                    } catch {
                        stepLogger.error("workflow step failed", ["error": .string(String(describing: error))])
                    }
                }
                if accepted { handed += 1 }
            }
            try store.write { tx in
                for id in try tx.expiredPendingIDs(nowMilliseconds: now, limit: limit) {
                    guard var request = try tx.request(id: id) else { continue }
                    _ = try Self.finishedRefusal(tx, &request, nowMilliseconds: now)
                }
            }
            return handed
        } catch {
            logger.error("workflow timer failed", ["error": .string(String(describing: error))])
            return 0
        }
    }

    /// Deletes finished requests and send counters older than the retention.
    public func prune(logger: Logger) {
        let cutoff = clock.nowMilliseconds() - max(settings.retentionSeconds, 86_400) * 1000
        do {
            try store.write { tx in try tx.prune(before: cutoff) }
        } catch {
            logger.error("prune failed", ["error": .string(String(describing: error))])
        }
    }

    // MARK: Status

    /// The request and its events, never the code nor its hash.
    public func status(requestID: String, owner: RequestOwner?) throws -> JSON {
        let now = clock.nowMilliseconds()
        let found: (StoredRequest, [RequestEvent])? = try store.write { tx in
            guard var request = try tx.request(id: requestID), Self.owns(owner, request) else { return nil }
            _ = try Self.finishedRefusal(tx, &request, nowMilliseconds: now)
            return (request, try tx.events(requestID: requestID))
        }
        guard let (request, events) = found else { throw VerificationError.notFound }
        return Self.view(request, events: events, maxAttempts: settings.maxAttempts)
    }

    static func view(_ r: StoredRequest, events: [RequestEvent], maxAttempts: Int) -> JSON {
        func seconds(_ milliseconds: Int64?) -> JSON { milliseconds.map { .int($0 / 1000) } ?? .null }
        return [
            "request_id": .string(r.id), "status": .string(r.status.rawValue), "purpose": .string(r.purpose.rawValue),
            "workflow": .string(r.workflow.rawValue), "step": .int(Int64(r.step + 1)), "steps": .int(Int64(r.workflow.steps.count)),
            "channel": r.codeChannel.map { .string($0.rawValue) } ?? .null,
            "number": r.number.map(JSON.string) ?? .null, "email": r.email.map(JSON.string) ?? .null,
            "user_id": r.userID.map(JSON.string) ?? .null, "payload_bound": .bool(r.payloadHash != nil),
            "failed_attempts": .int(Int64(r.failures)), "attempts_left": .int(Int64(max(0, maxAttempts - r.failures))),
            "created_at": seconds(r.createdAt), "code_expires_at": seconds(r.codeExpiresAt),
            "next_event_at": seconds(r.nextEventAt), "finished_at": seconds(r.finishedAt),
            "events": .array(events.map { event in
                var fields: [String: JSON] = ["at": .int(event.at / 1000), "kind": .string(event.kind)]
                if let channel = event.channel { fields["channel"] = .string(channel) }
                if let detail = event.detail { fields["detail"] = .string(detail) }
                return .object(fields)
            }),
        ]
    }

    // MARK: Hashes

    /// The send-limit key of a number or an address: a keyed hash (128 bits), so the limits
    /// name nobody, and outlive a deleted user who owned the number.
    func limitKey(destination: String) -> String {
        "dest:" + Hex.encode(Array(key.authenticate(Array("limit\u{0}\(destination)".utf8)).prefix(16)))
    }

    /// The user's requests for `identity.export` (at most 10,000, newest first): the numbers and
    /// addresses codes went to, the purposes, the outcomes, the delivery events; never a code.
    public func requestsForExport(userID: String) throws -> [JSON] {
        try store.read { tx in try tx.requestsForExport(userID: userID, limit: 10_000) }
    }

    /// A deleted user's part here: requests, their events and queued sends, the user's limit.
    /// The number's and the address's limits stay, under their keyed hashes.
    public func erase(_ erasure: ErasureFollower.Erasure) throws -> ErasureFollower.Outcome {
        let erased = try store.write { tx in try tx.eraseUser(userID: erasure.userID, number: erasure.phone, email: erasure.email) }
        metrics?.increment("users_erased")
        metrics?.increment("requests_erased", by: Int64(erased))
        return .done
    }

    func codeHash(requestID: String, code: String) -> [UInt8] {
        key.authenticate(Array("code\u{0}\(requestID)\u{0}\(code)".utf8))
    }

    /// HMAC of the canonical JSON (keys sorted, no whitespace): the same payload always hashes the same.
    func payloadHash(_ payload: JSON) -> [UInt8] {
        key.authenticate(Array("payload\u{0}".utf8) + payload.encoded())
    }
}
