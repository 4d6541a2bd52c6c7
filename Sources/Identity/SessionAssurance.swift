/// What a session may do, modelled on Ory Kratos' `highest_available`: a session that owes
/// factors (`required_factors` not empty) may only complete them, read its own entry and log
/// out; sensitive changes need aal 2 reached within `stepUpWindowSeconds`. The gateway enforces
/// the same rules from `identity.introspect`; identity checks them again for its own methods.
public struct SessionAssurance: Sendable, Equatable {
    /// The factors the session must still pass (empty at aal 2).
    public var requiredFactors: [String]
    /// Until when (unix seconds) the session's aal 2 counts as recent; nil if it never reached aal 2.
    public var stepUpUntil: Int64?

    public var owesFactors: Bool { !requiredFactors.isEmpty }

    public func isRecentStepUp(now: Int64) -> Bool { stepUpUntil.map { now < $0 } ?? false }
}

extension IdentityService {
    /// The factors a session below aal 2 still owes, any one of them enough, in the order the
    /// app should offer them: the device's `biometry` key when it has one (a `user_presence`
    /// key cannot pay), a passkey when the user has one, the authenticator app when the user set one up, and SMS when the user
    /// turned it on or the device is not trusted: trust is the session's device token having
    /// paid a factor before, never the bare device id. A recovery code
    /// (`identity.recovery_verify`) is accepted in place of any of them.
    func requiredFactors(of session: SessionRecord) throws -> [String] {
        guard session.aal < 2 else { return [] }
        guard let state = try store.factorState(
            userID: session.userID, deviceID: session.deviceID, deviceTokenHash: session.deviceTokenHash, now: clock.now())
        else { return [] }
        var required: [String] = []
        if state.hasBiometryKey && (state.biometryKeyAttested || !settings.appAttest.required) { required.append("device_key") }
        if state.hasPasskey { required.append("passkey") }
        if state.hasTotp { required.append("totp") }
        if state.smsVerification || !state.deviceTrusted { required.append("sms") }
        return required
    }

    public func assurance(of session: SessionRecord) throws -> SessionAssurance {
        SessionAssurance(
            requiredFactors: try requiredFactors(of: session),
            stepUpUntil: session.aal >= 2 ? session.aal2At.map { $0 + settings.stepUpWindowSeconds } : nil)
    }

    /// The live session behind `token`, refused (`step_up_required`) while it owes factors.
    func settledSession(token: String) throws -> SessionRecord {
        let session = try introspect(token: token)
        let assurance = try assurance(of: session)
        if assurance.owesFactors { throw IdentityError.factorsOwed(assurance.requiredFactors) }
        return session
    }

    /// The live session behind `token`, refused (`step_up_required`) unless it reached aal 2
    /// within the step-up window: for revoking keys and sessions, enrolling keys, weakening factors.
    func recentlySteppedUpSession(token: String) throws -> SessionRecord {
        let session = try introspect(token: token)
        try requireRecentStepUp(session)
        return session
    }

    func requireRecentStepUp(_ session: SessionRecord) throws {
        let assurance = try assurance(of: session)
        if assurance.owesFactors { throw IdentityError.factorsOwed(assurance.requiredFactors) }
        guard assurance.isRecentStepUp(now: clock.now()) else { throw IdentityError.recentStepUpRequired(windowSeconds: settings.stepUpWindowSeconds) }
    }
}
