import Contract
import Delivery
import LineProtocol
import RPC
import ServiceKit

/// The method table: reads params, picks the public form (with `session`) or the internal one,
/// calls the service, shapes the answer. Public forms act only for the session's own user.
public struct VerificationMethods: Sendable {
    public let service: VerificationService
    public let identity: IdentityDirectory

    public init(service: VerificationService, identity: IdentityDirectory) {
        self.service = service
        self.identity = identity
    }

    public func register(on router: Router) {
        router.register(VerificationContract.start) { params, context in try await start(params, context) }
        router.register(VerificationContract.check) { params, context in try await check(params, context) }
        router.register(VerificationContract.cancel) { params, context in try await cancel(params, context) }
        router.register(VerificationContract.next) { params, context in try await next(params, context) }
        router.register(VerificationContract.statusOf) { params, context in try status(params, context) }
        router.register(DataExportContract.verificationPart) { [service] params, _ in
            ["requests": .array(try service.requestsForExport(userID: try params.string("user_id", maxLength: 128)))]
        }
    }

    func start(_ params: Params, _ context: CallContext) async throws -> JSON {
        if params.has("session") {
            return try await publicStart(params, context)
        }
        let purposeText = try params.string("purpose", maxLength: 16)
        guard let purpose = Purpose(rawValue: purposeText) else {
            throw RPCError.invalidParams("purpose must be login, transaction or phone_proof", field: "purpose")
        }
        var start = StartParameters(workflow: try Self.workflow(params), purpose: purpose)
        start.number = try params.optionalString("number", maxLength: 32)
        start.userID = try params.optionalString("user_id", maxLength: 128)
        start.email = try params.optionalString("email", maxLength: 254)
        start.brand = try params.optionalString("brand", maxLength: 64)
        start.codeLength = try params.optionalInt("code_length", range: 1...100).map(Int.init)
        start.codeExpirySeconds = try params.optionalInt("code_expiry_s", range: VerificationContract.codeLifetimeSeconds)
        start.nextEventWaitSeconds = try params.optionalInt("next_event_wait_s", range: 1...86_400)
        start.locale = try Self.locale(params)
        start.payload = try params.optionalObject("payload")
        start.allowEmail = try params.optionalBool("allow_email") ?? false
        start.country = try params.optionalString("country", maxLength: 2)
        start.client = context.client
        if let payload = start.payload, JSON.object(payload).encoded().count > 2048 {
            throw RPCError.invalidParams("payload is larger than 2048 bytes", field: "payload")
        }
        let provenNumber = try params.optionalString("proven_number", maxLength: 32)
        if provenNumber != nil, start.userID == nil {
            throw RPCError.invalidParams("proven_number is the proven phone of user_id: give both", field: "proven_number")
        }
        if let provenNumber, !start.workflow.usesEmail {
            // The caller read the user's proven phone from identity for this very request
            // (accounts, with the session): no second lookup. An e-mail step needs the profile.
            if start.number == nil { start.number = provenNumber }
            start.provenNumber = provenNumber
        } else if let userID = start.userID {
            let profile = try await profile(userID, context)
            if start.number == nil, start.workflow.steps.contains(where: { $0 != .email }) { start.number = profile.phone }
            if start.email == nil, start.workflow.usesEmail { start.email = profile.email }
            start.provenNumber = profile.provenPhone
        }
        return ["request_id": .string(try service.start(start, logger: context.logger))]
    }

    /// `{session, channel?, locale?}`: a login factor to the phone on the user's profile; while
    /// the user has not proved that phone, the code is a `phone_proof` (the only code it gets).
    private func publicStart(_ params: Params, _ context: CallContext) async throws -> JSON {
        let session = try await identity.introspect(params, context)
        var workflow = service.settings.publicWorkflow
        if params.has("channel") {
            workflow = try Self.workflow(params)
            guard !workflow.usesEmail else {
                throw VerificationError.invalidParams("e-mail is not a second factor for login", field: "channel", rule: "email_not_a_login_factor")
            }
        }
        let profile = try await profile(session.userID, context)
        var start = StartParameters(workflow: workflow, purpose: profile.provenPhone == nil ? .phoneProof : .login)
        start.userID = session.userID
        start.number = profile.phone
        start.provenNumber = profile.provenPhone
        start.nextEventWaitSeconds = min(service.settings.publicNextWaitSeconds, service.settings.defaultCodeExpirySeconds)
        start.locale = try Self.locale(params)
        start.client = context.client
        guard start.number != nil else {
            throw VerificationError.invalidParams("the profile has no phone number", field: "session", rule: "no_phone")
        }
        let requestID = try service.start(start, logger: context.logger.with(["verification.user_id": .string(session.userID)]))
        return ["request_id": .string(requestID), "purpose": .string(start.purpose.rawValue)]
    }

    func check(_ params: Params, _ context: CallContext) async throws -> JSON {
        let requestID = try params.string("request_id", maxLength: 128)
        let code = try params.string("code", maxLength: 16)
        guard params.has("session") else {
            let payload = try params.optionalObject("payload").map(JSON.object)
            let result = try service.check(requestID: requestID, code: code, payload: payload, owner: nil, logger: context.logger)
            var answer: [String: JSON] = ["status": "verified"]
            if let userID = result.userID { answer["user_id"] = .string(userID) }
            return .object(answer)
        }
        let session = try await identity.introspect(params, context)
        let owner = RequestOwner(userID: session.userID, loginOnly: true)
        let result: CheckResult
        do {
            result = try service.check(requestID: requestID, code: code, payload: nil, owner: owner, logger: context.logger)
        } catch let error as VerificationError {
            switch error {
            case .invalidCode, .tooManyAttempts:
                await audit(session, event: "factor.failed", outcome: error.rpcError.reasonText ?? "invalid_code", context)
            default: break
            }
            if error == .tooManyAttempts && session.owesFactors { await endOwingSession(params, context) }
            throw error
        }
        var answer: [String: JSON] = ["status": "verified"]
        if result.purpose == .phoneProof, let number = result.number {
            // Proved before elevating: a session never reaches aal 2 on a number left unproven.
            try await identity.provePhone(userID: session.userID, number: number, context)
            answer["phone_verified"] = true
        }
        answer["aal"] = .int(try await identity.elevate(sessionID: session.sessionID, factor: result.channel.rawValue, context))
        await audit(session, event: "factor.passed", outcome: result.channel.rawValue, context)
        return .object(answer)
    }

    func cancel(_ params: Params, _ context: CallContext) async throws -> JSON {
        let requestID = try params.string("request_id", maxLength: 128)
        let owner = try await owner(params, context)
        let status = try service.cancel(requestID: requestID, owner: owner, logger: context.logger)
        return ["status": .string(status.rawValue)]
    }

    func next(_ params: Params, _ context: CallContext) async throws -> JSON {
        let requestID = try params.string("request_id", maxLength: 128)
        let owner = try await owner(params, context)
        let channel = try service.next(requestID: requestID, owner: owner, client: context.client, logger: context.logger)
        return ["status": "pending", "channel": .string(channel.rawValue)]
    }

    func status(_ params: Params, _ context: CallContext) throws -> JSON {
        try service.status(requestID: try params.string("request_id", maxLength: 128), owner: nil)
    }

    // MARK: Helpers

    /// A session that still owes factors may touch only login requests (its own factor).
    private func owner(_ params: Params, _ context: CallContext) async throws -> RequestOwner? {
        guard params.has("session") else { return nil }
        let session = try await identity.introspect(params, context)
        return RequestOwner(userID: session.userID, loginOnly: session.owesFactors)
    }

    /// The login code failed for good: the session owes a factor it can no longer pass, so it
    /// ends (the app logs the user out here). Best effort: the answer stays `too_many_attempts`.
    private func endOwingSession(_ params: Params, _ context: CallContext) async {
        do {
            try await identity.endSession(params, context)
        } catch {
            context.logger.warning("ending the session after too many codes failed", ["error.reason": .string(error.reasonText ?? "error")])
        }
    }

    private struct Profile {
        var phone: String?
        var email: String?
        /// The phone, when its owner has proved it (`phone_verified`).
        var provenPhone: String?
    }

    private func profile(_ userID: String, _ context: CallContext) async throws -> Profile {
        let user = try await identity.user(userID, context)
        let phone = user["phone"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        return Profile(phone: phone, email: user["email"]?.stringValue, provenPhone: user["phone_verified"] == .bool(true) ? phone : nil)
    }

    /// Audit events are best effort: a failed record is logged, never turns a check around.
    private func audit(_ session: SessionInfo, event: String, outcome: String, _ context: CallContext) async {
        do {
            try await identity.record(userID: session.userID, event: event, outcome: outcome, deviceID: session.deviceID, context)
        } catch {
            context.logger.warning("audit record failed", ["audit.event": .string(event), "error": .string(error.message)])
        }
    }

    static func workflow(_ params: Params) throws -> Workflow {
        let channel = try params.optionalString("channel", maxLength: 16)
        let workflow = try params.optionalString("workflow", maxLength: 32)
        switch (channel, workflow) {
        case (nil, nil): return .sms
        case (let channel?, nil):
            guard let parsed = DeliveryChannel(rawValue: channel) else {
                throw RPCError.invalidParams("channel must be sms, voice or email", field: "channel")
            }
            return Workflow(channel: parsed)
        case (nil, let workflow?):
            guard let parsed = Workflow(rawValue: workflow) else {
                throw RPCError.invalidParams("workflow must be sms, voice, sms_voice, sms_voice_voice, sms_sms_voice or email", field: "workflow")
            }
            return parsed
        case (_?, _?):
            throw RPCError.invalidParams("give channel or workflow, not both", field: "workflow")
        }
    }

    static func locale(_ params: Params) throws -> MessageLocale? {
        guard let text = try params.optionalString("locale", maxLength: 16) else { return nil }
        let language = String(text.lowercased().prefix { $0 != "-" && $0 != "_" })
        guard let locale = MessageLocale(rawValue: language) else {
            throw RPCError.invalidParams("locale must be en, fr or ru", field: "locale")
        }
        return locale
    }
}
