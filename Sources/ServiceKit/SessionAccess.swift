import Contract
import LineProtocol

extension SessionInfo {
    /// Why a method of `access` refuses this session (nil: it may call); the one rule the
    /// gateway and the services both apply. After Ory Kratos' `highest_available`: a session that
    /// owes factors (a password on a new device) may only complete them, read itself and log
    /// out; a sensitive change needs aal 2 reached within the step-up window. `nowSeconds` is wall time.
    public func refusal(for access: MethodContract.Access, nowSeconds: Int64) -> RPCError? {
        guard access.needsSettledSession else { return nil }
        if owesFactors { return SessionResolver.factorsOwed(requiredFactors) }
        guard access == .recentStepUp, (stepUpUntil ?? 0) <= nowSeconds else { return nil }
        return RPCError(
            .stepUpRequired, "this change needs a second factor passed recently; pass one again",
            extra: ["detail": "recent_step_up", "aal": .int(aal)])
    }
}
