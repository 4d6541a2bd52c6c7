import LineProtocol

/// The user's checking and saving accounts, and transfers between them confirmed one by one.
public enum AccountsContract {
    static let accountName = Schema.string(maxBytes: 16, values: ["checking", "saving"])
    static let balance = Schema.object([Member("name", .string), Member("balance", .amount), Member("currency", .string)])
    static let idempotencyKey = Member("idempotency_key", .string(maxBytes: 128, nonEmpty: true))
    static let transferID = Member("transfer_id", .string(maxBytes: 64))

    public static let balances = MethodContract(
        "accounts.balances", .session, retry: .safe, summary: "The user's accounts and their balances.", params: [Fields.session],
        result: [Member("accounts", .array(balance))], errors: [.unauthenticated, .stepUpRequired])
    public static let transfer = MethodContract(
        "accounts.transfer", .session, retry: .withIdempotencyKey,
        summary: "Starts a transfer between the user's accounts, to be confirmed by its code or a device-key signature.",
        params: [
            Fields.session, Member("from", accountName), Member("to", accountName), Member("amount", .integer(minimum: 1)), idempotencyKey,
            Member("confirm_with", .string(maxBytes: 16, values: ["sms", "device_key"]), .optional), Fields.deviceID.optional,
        ],
        result: [
            Member("transfer_id", .string), Member("request_id", .nullable(.string)),
            Member("status", .string(values: ["pending", "done", "expired", "failed", "cancelled"])), Member("amount", .amount),
            Member("currency", .string), Member("from", .string), Member("to", .string), Member("expires_at", .timestamp),
            Member("confirm_with", .string, .optional), Member("device_id", .string, .optional), Member("challenge", .string, .optional),
            Member("sign", .string, .optional),
        ],
        errors: [.unauthenticated, .stepUpRequired, .insufficientFunds, .conflict, .concurrentVerification, .notFound])
    public static let confirm = MethodContract(
        "accounts.confirm", .session, group: .auth, retry: .neverSent,
        summary: "Confirms a pending transfer with its code, or with the device key's signature over its bytes.",
        params: [
            Fields.session, transferID, Member("code", .string(maxBytes: 32), .optional), Fields.deviceID.optional,
            Member("signature", .string(maxBytes: 256), .optional), Fields.appAttestAssertion,
        ],
        result: [Member("status", .string), Member("transfer_id", .string), Member("accounts", .array(balance))],
        errors: [.unauthenticated, .stepUpRequired, .invalidCode, .tooManyAttempts, .expired, .insufficientFunds, .notFound, .conflict])
    public static let history = MethodContract(
        "accounts.history", .session, retry: .safe, summary: "The user's bookings, newest first.",
        params: [Fields.session, Fields.limit, Fields.before],
        result: [
            Member(
                "entries",
                .array(.object([
                    Member("entry_id", .string), Member("kind", .string(values: ["transfer", "deposit"])), Member("account", .string),
                    Member("counterpart", .string), Member("amount", .amount), Member("direction", .string), Member("balance_after", .amount),
                    Member("currency", .string), Member("at", .timestamp), Member("transfer_id", .string, .optional),
                ]))),
            Fields.next,
        ],
        errors: [.unauthenticated, .stepUpRequired])
    public static let deposit = MethodContract(
        "accounts.deposit", .operator, retry: .withIdempotencyKey, summary: "Money from outside into a user's account (`latchkey deposit`).",
        params: [Fields.userID, Member("account", accountName), Member("amount", .integer(minimum: 1)), idempotencyKey],
        result: [Member("balance", .amount), Member("currency", .string)], errors: [.conflict])
    public static let payOut = MethodContract(
        "accounts.pay_out", .operator, retry: .withIdempotencyKey,
        summary: "Money from a user's account to outside, paid by other means (`latchkey deletions settle`).",
        params: [Fields.userID, Member("account", accountName), Member("amount", .integer(minimum: 1)), idempotencyKey],
        result: [Member("balance", .amount), Member("currency", .string)], errors: [.conflict, .insufficientFunds])
    public static let audit = MethodContract(
        "accounts.audit", .operator, retry: .safe, summary: "Checks the ledger's invariants (`latchkey audit`).",
        result: [Fields.ok, Member("breaches", .array(.anyObject))])

    static let all = [balances, transfer, confirm, history, deposit, payOut, audit]
}

/// Password reset by e-mailed link.
public enum ResetContract {
    static let token = Member("token", .string(maxBytes: 256))

    public static let request = MethodContract(
        "reset.request", .open, group: .reset, retry: .neverSent,
        summary: "Mails a reset link if the address has an account: the same answer, in the same time, either way.",
        params: [Fields.email], result: [Fields.ok])
    public static let validate = MethodContract(
        "reset.validate", .open, group: .reset, retry: .safe, summary: "Whether a reset token is still good.", params: [token],
        result: [Member("valid", .boolean), Member("expires_at", .timestamp)], errors: [.invalidToken])
    public static let complete = MethodContract(
        "reset.complete", .open, group: .reset, retry: .neverSent, summary: "Sets the new password with a reset token.",
        params: [token, Member("password", .string(maxBytes: 4096))], result: [Fields.ok], errors: [.invalidToken, .weakPassword])

    static let all = [request, validate, complete]
}
