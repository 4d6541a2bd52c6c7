import LineProtocol

/// One-time codes by SMS, voice and e-mail. Each public method also has an internal form
/// (other services, without a session) that acts for whatever request it names.
public enum VerificationContract {
    static let code = Member("code", .string(maxBytes: 16, pattern: "^[0-9]{1,16}$"))
    /// A language tag whose language is English, French or Russian (`fr`, `fr-CA`, `ru_RU`).
    static let locale = Member("locale", .string(maxBytes: 16, pattern: "^([Ee][Nn]|[Ff][Rr]|[Rr][Uu])([-_][^-_]{0,13})?$"), .optional)
    static let channel = Member("channel", .string(maxBytes: 16, values: ["sms", "voice", "email"]), .optional)
    static let status = Member("status", .string)
    static let requestErrors: [Reason] = [.notFound, .conflict]
    /// How long a code may live (`code_expiry_s`): NIST SP 800-63B's 10-minute ceiling for an
    /// out-of-band secret. A transfer's code lives as long as the transfer, so accounts'
    /// `--transfer-expiry-s` takes this range too.
    public static let codeLifetimeSeconds: ClosedRange<Int64> = 30...600

    public static let start = MethodContract(
        "verification.start", .owesFactorsAllowed, group: .codes, retry: .neverSent,
        summary: "Sends a login code to the phone on the user's profile (a phone_proof while that phone is unproved).",
        params: [Fields.session, channel, locale], result: [Fields.requestID, Member("purpose", .string(values: ["login", "phone_proof"]))],
        errors: [.unauthenticated, .concurrentVerification],
        internalForm: .init(
            params: [
                Member("purpose", .string(maxBytes: 16, values: ["login", "transaction", "phone_proof"])),
                Member("workflow", .string(maxBytes: 32), .optional), channel, Member("number", .string(maxBytes: 32), .optional),
                Fields.userID.optional, Member("email", .string(maxBytes: EmailAddress.maxBytes), .optional), Member("brand", .string(maxBytes: 64), .optional),
                Member("code_length", .integer(minimum: 4, maximum: 10), .optional),
                Member("code_expiry_s", .integer(minimum: codeLifetimeSeconds.lowerBound, maximum: codeLifetimeSeconds.upperBound), .optional),
                Member("next_event_wait_s", .integer(minimum: 1, maximum: 86_400), .optional), locale,
                Member("payload", .anyObject, .optional), Member("allow_email", .boolean, .optional),
                Member("country", .string(maxBytes: 2), .optional), Member("proven_number", .string(maxBytes: 32), .optional),
            ],
            result: [Fields.requestID], errors: [.concurrentVerification, .notFound]))
    public static let check = MethodContract(
        "verification.check", .owesFactorsAllowed, group: .auth, retry: .neverSent, summary: "Checks a code; a login code pays the session's factor.",
        params: [Fields.session, Fields.requestID, code],
        result: [status, Fields.aal, Member("phone_verified", .boolean, .optional)],
        errors: [.unauthenticated, .invalidCode, .tooManyAttempts, .expired] + requestErrors,
        internalForm: .init(
            params: [Fields.requestID, code, Member("payload", .anyObject, .optional)], result: [status, Fields.userID.optional],
            errors: [.invalidCode, .tooManyAttempts, .expired] + requestErrors),
        cacheEffect: .dropCallerSession, routesByRequestID: true)
    public static let cancel = MethodContract(
        "verification.cancel", .owesFactorsAllowed, retry: .neverSent, summary: "Ends a pending request.",
        params: [Fields.session, Fields.requestID], result: [status], errors: [.unauthenticated] + requestErrors,
        internalForm: .init(params: [Fields.requestID], result: [status], errors: requestErrors), routesByRequestID: true)
    public static let next = MethodContract(
        "verification.next", .owesFactorsAllowed, group: .codes, retry: .neverSent,
        summary: "Moves a request to its workflow's next channel now instead of waiting.",
        params: [Fields.session, Fields.requestID], result: [status, Member("channel", .string)],
        errors: [.unauthenticated] + requestErrors,
        internalForm: .init(params: [Fields.requestID], result: [status, Member("channel", .string)], errors: requestErrors),
        routesByRequestID: true)
    public static let statusOf = MethodContract(
        "verification.status", .internal, retry: .safe,
        summary: "Everything about a request (its destination and user too, so never public).", params: [Fields.requestID],
        result: [
            Fields.requestID, status, Member("purpose", .string), Member("workflow", .string), Member("step", .integer(minimum: 1)),
            Member("steps", .integer(minimum: 1)), Member("channel", .nullable(.string)), Member("number", .nullable(.string)),
            Member("email", .nullable(.string)), Member("user_id", .nullable(.string)), Member("payload_bound", .boolean),
            Member("failed_attempts", .integer(minimum: 0)), Member("attempts_left", .integer(minimum: 0)),
            Member("created_at", .nullable(.timestamp)), Member("code_expires_at", .nullable(.timestamp)),
            Member("next_event_at", .nullable(.timestamp)), Member("finished_at", .nullable(.timestamp)),
            Member(
                "events",
                .array(.object([
                    Member("at", .timestamp), Member("kind", .string), Member("channel", .string, .optional), Member("detail", .string, .optional),
                ]))),
        ],
        errors: [.notFound])

    static let all = [start, check, cancel, next, statusOf]
}
